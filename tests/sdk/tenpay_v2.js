#!/usr/bin/env node
// tenpay_v2.js - a real WeChat Pay v2 SDK that no one here wrote (npm tenpay,
// pinned in tests/sdk/package-lock.json) drives the merchant side against the
// mock gateway: unifiedorder -> the mock's payer pays -> the SDK's
// notification middleware accepts the notification -> orderquery ->
// closeorder refused before the minimum age, accepted after the mock's clock
// moved -> micropay + reverse -> refund refused without the client
// certificate, accepted with it -> refundquery -> the refund notification ->
// downloadbill for yesterday.
//
// Contract: prints one JSON line per step, {"name","ok","detail"}, in the
// order of STEPS, every step exactly once (a step whose prerequisite failed
// is printed not ok, saying which); exits 0 when it could run at all (the
// caller, tests/integration/test_sdk_v2.py, judges the steps), 2 on bad
// usage. It turns the mock's instant_charge off (WeChat's prepay flow) and
// require_client_cert on, and changes other knobs as the steps say; it restores clock_offset_ms before
// it exits, and the caller resets the mock.
//
// Settings (environment): SDK_DIR (the node_modules' parent, $STATE/sdk),
// MOCK_URL (http://127.0.0.1:PORT), MOCK_TLS_URL (https://HOST:PORT, the
// mock's /secapi front; empty when the stack has none), SDK_PFX (PKCS#12 of
// the merchant's client certificate, passphrase = mch_id as WeChat issues
// it; tenpay sends it as such), WX_APPID, WX_MCHID, WX_KEY. The mock's
// server certificate is trusted through NODE_EXTRA_CA_CERTS (tenpay passes
// no CA of its own).
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');

const env = process.env;
const need = ['SDK_DIR', 'MOCK_URL', 'WX_APPID', 'WX_MCHID', 'WX_KEY'];
for (const k of need) {
  if (!env[k]) { console.error(`tenpay_v2.js: ${k} is not set`); process.exit(2); }
}
const Payment = require(path.join(env.SDK_DIR, 'node_modules', 'tenpay'));

const STEPS = ['unifiedorder', 'payer_pay', 'notify_pay', 'orderquery', 'orderquery_hmac',
  'closeorder_too_young', 'closeorder_after_min_age', 'micropay', 'reverse',
  'refund_without_cert', 'refund', 'refundquery', 'notify_refund',
  'downloadbill_yesterday'];
const MOCK = env.MOCK_URL;
const TLS = env.MOCK_TLS_URL || '';
const FEE = 101;
const OPENID = 'oSdkTenpayPayer000000000000';
const AUTH_CODE = '134567890123456789';   // 18 digits, prefix 10-15

// --- the SDK, pointed at the mock --------------------------------------------
// tenpay has no base-URL option; its endpoint table is the instance's public
// `urls` field, which we point at the mock (the plain-HTTP front for /pay/*,
// the TLS front for /secapi/*).
function client(withCert, notifyBase) {
  const pay = new Payment({
    appid: env.WX_APPID, mchid: env.WX_MCHID, partnerKey: env.WX_KEY,
    pfx: withCert && env.SDK_PFX ? fs.readFileSync(env.SDK_PFX) : undefined,
    notify_url: notifyBase + '/notify/pay', refund_url: notifyBase + '/notify/refund',
  });
  for (const k of Object.keys(pay.urls)) {
    const u = new URL(pay.urls[k]);
    const secure = u.pathname.startsWith('/secapi/');
    pay.urls[k] = (secure ? (TLS || 'https://mock-tls-port-not-configured.invalid') : MOCK) + u.pathname;
  }
  return pay;
}

// --- the notification receiver: raw body -> the SDK's Koa middleware ----------
const received = { pay: [], refund: [] };

function notifyServer() {
  const mw = { pay: null, refund: null };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', c => chunks.push(c));
    req.on('end', async () => {
      const type = req.url === '/notify/refund' ? 'refund' : 'pay';
      const entry = await parseNotification(mw[type], Buffer.concat(chunks).toString('utf8'));
      received[type].push(entry);
      res.writeHead(200, { 'Content-Type': 'application/xml; charset=utf-8' });
      res.end(entry.reply);
    });
  });
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => {
    const base = `http://127.0.0.1:${server.address().port}`;
    const pay = client(false, base);
    mw.pay = pay.middleware('pay');
    mw.refund = pay.middleware('refund');
    resolve({ server, base });
  }));
}

// Runs the SDK's middleware on one raw body, as Koa would: {raw, weixin
// (the parsed, verified fields, or null), reply (what the SDK answered)}.
async function parseNotification(middleware, raw) {
  const ctx = { request: { body: raw } };
  let weixin = null;
  await middleware(ctx, async () => { weixin = ctx.request.weixin; ctx.reply(); });
  return { raw, weixin, reply: String(ctx.body || '') };
}

// --- helpers ----------------------------------------------------------------
const sleep = ms => new Promise(r => setTimeout(r, ms));

async function admin(method, p, body) {
  const r = await fetch(MOCK + p, {
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
  if (r.status !== 200 || !r.json) throw new Error(`GET /mock/config: ${r.status} ${r.text}`);
  return r.json;
}

async function setKnobs(k) {
  const r = await admin('PUT', '/mock/config', k);
  if (r.status !== 200) throw new Error(`PUT /mock/config ${JSON.stringify(k)}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.json;
}

// Moves the mock's clock ms further forward (the clock_offset_ms knob).
async function advanceClock(ms) {
  const k = await knobs();
  if (typeof k.clock_offset_ms !== 'number') throw new Error('the mock has no clock_offset_ms knob');
  await setKnobs({ clock_offset_ms: k.clock_offset_ms + ms });
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
  return `SDK${tag}${Date.now() % 1e10}${Math.random().toString(36).slice(2, 8)}`;
}

function want(cond, msg) { if (!cond) throw new Error(msg); }

// China's date (UTC+8) of a moment, yyyyMMdd.
function chinaDay(ms) {
  return new Date(ms + 8 * 3600e3).toISOString().slice(0, 10).replace(/-/g, '');
}

// --- the steps ---------------------------------------------------------------
// Each returns its detail (a string) or throws; `st` carries what later steps need.
const st = {};

const steps = {
  async unifiedorder(p) {
    st.a = orderNo('A');
    const r = await p.unifiedOrder({ out_trade_no: st.a, body: 'sdk test', total_fee: FEE, trade_type: 'NATIVE', product_id: 'sdk' });
    want(r.prepay_id, `no prepay_id in ${JSON.stringify(r)}`);
    want(r.code_url, `no code_url for NATIVE in ${JSON.stringify(r)}`);
    want(!r.transaction_id, `a prepay must not carry a transaction_id (a charge): ${r.transaction_id}`);
    st.codeUrl = r.code_url;
    return `prepay_id=${r.prepay_id} code_url=${r.code_url}`;
  },

  async payer_pay() {
    want(st.codeUrl, 'needs unifiedorder (no code_url)');
    const r = await admin('POST', '/mock/payer/pay', { code_url: st.codeUrl, openid: OPENID });
    want(r.status === 200 && r.json, `POST /mock/payer/pay: ${r.status} ${r.text.slice(0, 200)}`);
    want(r.json.result === 'SUCCESS' && r.json.transaction_id, `payer: ${r.text}`);
    want(r.json.out_trade_no === st.a, `payer paid ${r.json.out_trade_no}, not ${st.a}`);
    st.txA = r.json.transaction_id;
    return `transaction_id=${st.txA}`;
  },

  async notify_pay() {
    want(st.txA, 'needs payer_pay');
    const n = await waitFor(() => received.pay.find(e => e.raw.includes(st.a)), 15000, `the notification of ${st.a}`);
    want(n.weixin, `the SDK refused the notification (replied ${n.reply}): ${n.raw}`);
    want(n.weixin.out_trade_no === st.a && n.weixin.transaction_id === st.txA,
      `notification names ${n.weixin.out_trade_no}/${n.weixin.transaction_id}`);
    want(String(n.weixin.total_fee) === String(FEE), `total_fee ${n.weixin.total_fee}`);
    want(n.weixin.openid === OPENID, `openid ${n.weixin.openid}, the payer's was ${OPENID}`);
    // the parser really checks: the same body with another amount is refused
    const forged = await parseNotification(st.mwPay, n.raw.replace(/<total_fee>\d+<\/total_fee>/, '<total_fee>1</total_fee>'));
    want(!forged.weixin && /FAIL/.test(forged.reply), 'the SDK accepted a forged amount: the check proves nothing');
    // and the mock understood the SDK's answer as the acknowledgement
    const j = await waitFor(async () => {
      const r = await admin('GET', `/mock/requests?out_trade_no=${st.a}`);
      return r.json && (r.json.notifications || []).find(x => x.acknowledged);
    }, 10000, `the mock to journal ${st.a}'s notification as acknowledged by the SDK's reply`);
    return `accepted (${n.weixin.trade_type}, total_fee ${n.weixin.total_fee}), the mock journals it acknowledged ` +
      `(HTTP ${j.http_status}); a forged amount refused: ${forged.reply.replace(/\s+/g, ' ')}`;
  },

  async orderquery(p) {
    want(st.txA, 'needs payer_pay');
    const r = await p.orderQuery({ out_trade_no: st.a });
    want(r.trade_state === 'SUCCESS' && r.transaction_id === st.txA, `orderquery: ${JSON.stringify(r)}`);
    return `trade_state=SUCCESS transaction_id=${r.transaction_id}`;
  },

  async orderquery_hmac(p) {
    want(st.txA, 'needs payer_pay');
    // the SDK verifies an HMAC-SHA256 reply with the reply's sign_type
    const r = await p.orderQuery({ out_trade_no: st.a, sign_type: 'HMAC-SHA256' });
    want(r.trade_state === 'SUCCESS' && r.sign_type === 'HMAC-SHA256', `orderquery: ${JSON.stringify(r)}`);
    return `HMAC-SHA256 reply verified (sign_type ${r.sign_type})`;
  },

  async closeorder_too_young(p) {
    st.b = orderNo('B');
    const u = await p.unifiedOrder({ out_trade_no: st.b, body: 'sdk close', total_fee: FEE, trade_type: 'NATIVE', product_id: 'sdk' });
    want(u.prepay_id && !u.transaction_id, `unifiedorder must create a prepay: ${JSON.stringify(u)}`);
    let err = null;
    try { await p.closeOrder({ out_trade_no: st.b }); } catch (e) { err = e; }
    want(err, 'closeorder of a just created order answered SUCCESS (WeChat refuses it within 5 minutes)');
    const q = await p.orderQuery({ out_trade_no: st.b });
    want(q.trade_state === 'NOTPAY', `after the refused close, orderquery says ${q.trade_state}`);
    st.bOpen = true;
    return `refused: ${err.message}; the order stays NOTPAY`;
  },

  async closeorder_after_min_age(p) {
    want(st.bOpen, 'needs closeorder_too_young');
    const k = await knobs();
    want(typeof k.closeorder_min_age_ms === 'number', 'the mock has no closeorder_min_age_ms knob');
    await advanceClock(k.closeorder_min_age_ms + 1000);
    const r = await p.closeOrder({ out_trade_no: st.b });
    const q = await p.orderQuery({ out_trade_no: st.b });
    want(q.trade_state === 'CLOSED', `after the close, orderquery says ${q.trade_state}`);
    return `clock +${k.closeorder_min_age_ms + 1000} ms: closeorder ${r.result_code}, orderquery CLOSED`;
  },

  async micropay(p) {
    st.c = orderNo('C');
    let r = null;
    try {
      r = await p.micropay({ out_trade_no: st.c, body: 'sdk micropay', total_fee: FEE, auth_code: AUTH_CODE });
    } catch (e) {
      // USERPAYING: the customer confirms on the phone; WeChat says poll orderquery
      want(e.message !== 'request fail', 'micropay: tenpay says "request fail": an HTTP status other than 200 (the mock has no /pay/micropay?)');
      want(e.message === 'USERPAYING', `micropay: ${e.message}`);
      r = await waitFor(async () => {
        const q = await p.orderQuery({ out_trade_no: st.c });
        want(q.trade_state === 'SUCCESS' || q.trade_state === 'USERPAYING', `USERPAYING became ${q.trade_state}`);
        return q.trade_state === 'SUCCESS' && q;
      }, 60000, `${st.c} to leave USERPAYING`);
    }
    want(r.transaction_id && String(r.total_fee) === String(FEE), `micropay: ${JSON.stringify(r)}`);
    st.txC = r.transaction_id;
    return `transaction_id=${st.txC}`;
  },

  async reverse(p) {
    want(st.txC, 'needs micropay');
    want(TLS, 'the mock has no TLS front for /secapi (IDEMPAY_MOCK_TLS_PORT)');
    want(env.SDK_PFX, 'no merchant client certificate (SDK_PFX)');
    const k = await knobs();
    if (typeof k.reverse_min_wait_ms === 'number') await advanceClock(k.reverse_min_wait_ms + 1000);
    const r = await p.reverse({ out_trade_no: st.c });
    want(r.recall === 'N', `reverse: recall=${r.recall}`);
    const q = await p.orderQuery({ out_trade_no: st.c });
    want(q.trade_state === 'REVOKED', `after reverse, orderquery says ${q.trade_state}`);
    return `recall=N, orderquery REVOKED`;
  },

  async refund_without_cert(p, bare) {
    want(st.txA, 'needs payer_pay (a paid order to refund)');
    want(TLS, 'the mock has no TLS front for /secapi (IDEMPAY_MOCK_TLS_PORT)');
    let err = null, r = null;
    try {
      r = await bare.refund({ out_trade_no: st.a, out_refund_no: `${st.a}R0`, total_fee: FEE, refund_fee: FEE });
    } catch (e) { err = e; }
    want(err, `refund without a client certificate was answered: ${JSON.stringify(r)}`);
    const code = err.code || '';
    want(!/ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(code + err.message), `the TLS front is not there: ${code} ${err.message}`);
    want(!/self[- ]signed|unable to verify|UNABLE_TO|CERT_/.test(code + err.message),
      `the mock's server certificate is not trusted (NODE_EXTRA_CA_CERTS): ${code} ${err.message}`);
    return `refused: ${code ? code + ' ' : ''}${err.message}`;
  },

  async refund(p) {
    want(st.txA, 'needs payer_pay (a paid order to refund)');
    want(TLS, 'the mock has no TLS front for /secapi (IDEMPAY_MOCK_TLS_PORT)');
    want(env.SDK_PFX, 'no merchant client certificate (SDK_PFX)');
    const k = await knobs();
    if (typeof k.refund_delay_ms === 'number' && k.refund_delay_ms > 2000) await setKnobs({ refund_delay_ms: 1000 });
    st.r = `${st.a}R1`;
    const r = await p.refund({ out_trade_no: st.a, out_refund_no: st.r, total_fee: FEE, refund_fee: FEE });
    want(r.refund_id && r.out_refund_no === st.r && String(r.refund_fee) === String(FEE), `refund: ${JSON.stringify(r)}`);
    st.refundId = r.refund_id;
    return `accepted: refund_id=${r.refund_id}`;
  },

  async refundquery(p) {
    want(st.refundId, 'needs refund');
    const seen = [];
    const r = await waitFor(async () => {
      const q = await p.refundQuery({ out_refund_no: st.r });
      seen.push(q.refund_status_0);
      want(['PROCESSING', 'SUCCESS'].includes(q.refund_status_0), `refund_status_0=${q.refund_status_0}`);
      return q.refund_status_0 === 'SUCCESS' && q;
    }, 30000, `refund ${st.r} to reach SUCCESS`);
    want(r.refund_id_0 === st.refundId && String(r.refund_fee_0) === String(FEE), `refundquery: ${JSON.stringify(r)}`);
    return `refund_status_0: ${[...new Set(seen)].join(' -> ')}`;
  },

  async notify_refund() {
    want(st.refundId, 'needs refund');
    const n = await waitFor(() => received.refund.find(e => e.weixin && e.weixin.req_info &&
      e.weixin.req_info.out_refund_no === st.r) || received.refund.find(e => !e.weixin), 30000,
      `the refund notification of ${st.r}`);
    want(n.weixin, `the SDK refused the refund notification (replied ${n.reply}): ${n.raw}`);
    const info = n.weixin.req_info;
    want(info.refund_status === 'SUCCESS' && info.refund_id === st.refundId && info.out_trade_no === st.a,
      `req_info: ${JSON.stringify(info)}`);
    return `req_info decrypted: refund_status=SUCCESS refund_id=${info.refund_id}`;
  },

  async downloadbill_yesterday(p) {
    want(st.txA, 'needs payer_pay (a trade in the bill)');
    const k = await knobs();
    want(typeof k.clock_offset_ms === 'number', 'the mock has no clock_offset_ms knob');
    const today = chinaDay(Date.now());
    // the mock's clock to tomorrow 11:00 China time: today is "yesterday"
    const target = Date.parse(`${today.slice(0, 4)}-${today.slice(4, 6)}-${today.slice(6)}T11:00:00+08:00`) + 86400e3;
    await setKnobs({ clock_offset_ms: Math.max(k.clock_offset_ms, target - Date.now()) });
    const bill = await p.downloadBill({ bill_date: today, bill_type: 'ALL' }, true);
    const col = name => bill.list_title.indexOf(name);
    const iOut = col('商户订单号'), iTx = col('微信订单号');
    want(iOut >= 0 && iTx >= 0, `bill header: ${bill.list_title.join(',')}`);
    const rows = bill.list_data.filter(r => r[iOut] === st.a);
    want(rows.some(r => r[iTx] === st.txA), `no line for ${st.a}/${st.txA} in ${bill.list_data.length} lines`);
    want(bill.total_title.length > 0 && bill.total_data.length === bill.total_title.length,
      `summary: ${bill.total_title.join(',')} / ${bill.total_data.join(',')}`);
    return `bill_date=${today}: ${bill.list_data.length} lines, ${rows.length} of ${st.a}; summary ${bill.total_data.join(',')}`;
  },
};

async function main() {
  const { server, base } = await notifyServer();
  const p = client(true, base);
  const bare = client(false, base);
  st.mwPay = bare.middleware('pay');
  let offset0 = null;
  try {
    const k = await knobs();
    offset0 = k.clock_offset_ms;
    // real WeChat: unifiedorder creates a prepay; ./stack may run the mock
    // with instant_charge (the old mock's charge at once) for the service
    if (k.instant_charge === true) await setKnobs({ instant_charge: false });
    // real WeChat: /secapi wants the merchant's certificate; ./stack may not ask
    if (k.require_client_cert === false) await setKnobs({ require_client_cert: true });
  } catch (e) { /* reported by the steps */ }
  for (const name of STEPS) {
    let line;
    try {
      line = { name, ok: true, detail: await steps[name](p, bare) };
    } catch (e) {
      line = { name, ok: false, detail: e.message || String(e) };
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
  if (typeof offset0 === 'number') {
    try { await setKnobs({ clock_offset_ms: offset0 }); } catch (e) { console.error(e.message); }
  }
  server.close();
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1); });
