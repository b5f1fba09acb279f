#!/usr/bin/env node
// Reference outputs from ONNX Runtime's CPU library (the onnxruntime-node npm package that
// scripts/setup.sh unpacks under .deps/npm/, its install script not run), for onnx_ort_check.sh:
//   onnx_ort.js ORT_PACKAGE_DIR CASES_DIR
// For every case in CASES_DIR/cases.json: runs <model> on <input> and writes <case>.ort.f32 (raw
// little-endian float32) and the output's shape into CASES_DIR/ort.json.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [pkg, dir] = process.argv.slice(2);
  const ort = require(path.resolve(pkg));
  const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
  const results = {};
  for (const c of cases) {
    process.env.ONNX_CASE = c.case;
    const session = await ort.InferenceSession.create(path.join(dir, c.model),
                                                      {executionProviders: ['cpu'], intraOpNumThreads: 2});
    const raw = fs.readFileSync(path.join(dir, c.input));
    const data = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, c.shape)};
    const out = (await session.run(feeds))[session.outputNames[0]];
    fs.writeFileSync(path.join(dir, c.case + '.ort.f32'), Buffer.from(out.data.buffer, out.data.byteOffset, out.data.byteLength));
    results[c.case] = {shape: out.dims, output: c.case + '.ort.f32'};
  }
  fs.writeFileSync(path.join(dir, 'ort.json'), JSON.stringify(results, null, 1));
  console.log(`onnx_ort: ${cases.length} references from onnxruntime-node ${ort.env.versions ? ort.env.versions.common : ''}`);
}

main().catch((e) => {
  console.error(`onnx_ort: ${process.env.ONNX_CASE || ''}: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
