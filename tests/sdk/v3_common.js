// v3_common.js - what the APIv3 SDK drivers (v3_node.js, v3_axios.js)
// share: their settings, the mock's admin API, a notification listener
// that keeps the raw body and headers of every POST, the steps' runner and
// a few checks. Not an SDK: everything signed, verified or decrypted in the
// drivers goes through the SDK under test.
//
// Settings (environment): SDK_DIR (the node_modules' parent), MOCK_URL
// (http://127.0.0.1:PORT), WX_APPID, WX_MCHID, V3_MCH_CERT / V3_MCH_KEY
// (the merchant's API certificate and key, PEM paths), V3_MCH_SERIAL (its
// serial, upper-case hex), APIV3_KEY (32 characters).
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');

const env = process.env;
for (const k of ['SDK_DIR', 'MOCK_URL', 'WX_APPID', 'WX_MCHID', 'V3_MCH_CERT', 'V3_MCH_KEY',
  'V3_MCH_SERIAL', 'APIV3_KEY']) {
  if (!env[k]) { console.error(`v3 driver: ${k} is not set`); process.exit(2); }
}

const cfg = {
  mock: env.MOCK_URL.replace(/\/$/, ''),
  appid: env.WX_APPID,
  mchid: env.WX_MCHID,
  cert: fs.readFileSync(env.V3_MCH_CERT),
  key: fs.readFileSync(env.V3_MCH_KEY),
  serial: env.V3_MCH_SERIAL,
  apiv3: env.APIV3_KEY,
  sdk: name => require(path.join(env.SDK_DIR, 'node_modules', name)),
};

const sleep = ms => new Promise(r => setTimeout(r, ms));
function want(cond, msg) { if (!cond) throw new Error(msg); }

async function admin(method, p, body) {
  const r = await fetch(cfg.mock + p, {
    method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? (method === 'GET' ? undefined : '') : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
  return { status: r.status, json, text };
}

async function knobs() {
  const r = await admin('GET', '/mock/config');
  want(r.status === 200 && r.json, `GET /mock/config: ${r.status}`);
  return r.json;
}

async function setKnobs(k) {
  const r = await admin('PUT', '/mock/config', k);
  want(r.status === 200, `PUT /mock/config ${JSON.stringify(k)}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.json;
}

async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

function orderNo(tag) {
  return `V3${tag}${Date.now() % 1e10}${Math.random().toString(36).slice(2, 7)}`;
}

// China's date (UTC+8) of a moment: yyyy-MM-dd.
function chinaDate(ms) {
  return new Date(ms + 8 * 3600e3).toISOString().slice(0, 10);
}

// The notification listener: every POST to /notify/<tag> is kept as
// {path, headers, raw} and answered `status` (200 or 204, as v3 wants).
function listener(status) {
  const got = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status);
      res.end();
    });
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => {
    resolve({ server, got, base: `http://127.0.0.1:${server.address().port}` });
  }));
}

// The payer pays code_url; returns the transaction_id.
async function payerPays(codeUrl, openid) {
  const r = await admin('POST', '/mock/payer/pay', { code_url: codeUrl, openid });
  want(r.status === 200 && r.json && r.json.result === 'SUCCESS' && r.json.transaction_id,
    `POST /mock/payer/pay: ${r.status} ${r.text.slice(0, 200)}`);
  return r.json;
}

// The mock's journal says a notification of otn was acknowledged.
async function acknowledged(otn) {
  return waitFor(async () => {
    const r = await admin('GET', `/mock/requests?out_trade_no=${otn}`);
    return r.json && (r.json.notifications || []).find(x => x.acknowledged);
  }, 10000, `the mock to journal ${otn}'s notification as acknowledged`);
}

// A copy of a notification body with one byte of its ciphertext (the
// encrypted bytes when which is 'ciphertext', the GCM tag when 'tag')
// flipped.
function tamper(raw, which) {
  const n = JSON.parse(raw);
  const b = Buffer.from(n.resource.ciphertext, 'base64');
  b[which === 'tag' ? b.length - 1 : 0] ^= 1;
  n.resource.ciphertext = b.toString('base64');
  return JSON.stringify(n);
}

// Runs steps in order, printing one JSON line each ({name, ok, detail});
// a step's failure does not stop the others.
async function run(steps) {
  for (const [name, fn] of steps) {
    let ok = false, detail;
    try {
      detail = await fn();
      ok = true;
    } catch (e) {
      detail = (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : String(e));
    }
    process.stdout.write(JSON.stringify({ name, ok, detail: String(detail).slice(0, 1500) }) + '\n');
  }
}

module.exports = {
  cfg, sleep, want, admin, knobs, setKnobs, waitFor, orderNo, chinaDate, listener, payerPays,
  acknowledged, tamper, run,
};
