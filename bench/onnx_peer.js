#!/usr/bin/env node
// The ONNX Runtime peer of bench/onnx.sh: a video upscaled by ONNX Runtime's CPU library (the
// onnxruntime-node npm package) the way pytorch_peer.py does it with PyTorch: ffmpeg decodes to
// raw RGB on a pipe, the session runs one frame at a time, ffmpeg encodes raw RGB to x264.
//   bench/onnx_peer.js ORT_PACKAGE_DIR MODEL.onnx INPUT W H SCALE OUTPUT [THREADS]
'use strict';
const {spawn} = require('child_process');
const path = require('path');

async function main() {
  const [pkg, model, input, w, h, scale, output, threads] = process.argv.slice(2);
  const ort = require(path.resolve(pkg));
  const W = Number(w), H = Number(h), S = Number(scale);
  const session = await ort.InferenceSession.create(model, {executionProviders: ['cpu'],
                                                            intraOpNumThreads: Number(threads || 0)});
  const dec = spawn('ffmpeg', ['-nostdin', '-v', 'error', '-i', input, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-']);
  const enc = spawn('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${W * S}x${H * S}`,
                               '-i', '-', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', output], {stdio: ['pipe', 'inherit', 'inherit']});
  const frameBytes = W * H * 3, plane = W * H, outPlane = W * S * H * S;
  let pending = Buffer.alloc(0);
  for await (const chunk of dec.stdout) {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      const frame = pending.subarray(0, frameBytes);
      pending = pending.subarray(frameBytes);
      const x = new Float32Array(3 * plane);
      for (let i = 0; i < plane; ++i)
        for (let c = 0; c < 3; ++c) x[c * plane + i] = frame[i * 3 + c] / 255;
      const out = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', x, [1, 3, H, W])});
      const y = out[session.outputNames[0]].data;
      const rgb = Buffer.alloc(outPlane * 3);
      for (let i = 0; i < outPlane; ++i)
        for (let c = 0; c < 3; ++c) rgb[i * 3 + c] = Math.max(0, Math.min(255, Math.round(y[c * outPlane + i] * 255)));
      if (!enc.stdin.write(rgb)) await new Promise((r) => enc.stdin.once('drain', r));
    }
  }
  enc.stdin.end();
  await new Promise((r) => enc.on('close', r));
}

main().catch((e) => {
  console.error(`onnx_peer: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
