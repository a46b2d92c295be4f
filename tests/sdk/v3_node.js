#!/usr/bin/env node
// v3_node.js - npm wechatpay-node-v3 (pinned in tests/sdk/package-lock.json),
// a WeChat Pay APIv3 SDK that no one here wrote, as the merchant against the
// mock: platform certificates -> a Native order -> the mock's payer pays ->
// the notification verified (verifySign) and decrypted (decipher_gcm) ->
// tampered notifications refused -> query -> close of a fresh order ->
// refund + refund query + the refund notification -> yesterday's trade bill
// downloaded and its SHA1 checked -> a second platform certificate
// announced, then signing.
//
// Contract: one JSON line per step ({"name","ok","detail"}) in STEPS' order,
// every step once; exit 0 when it could run at all (the caller,
// tests/integration/test_sdk_v3.py, judges the steps), 2 on bad usage. It
// turns the mock's instant_charge off and moves its clock and
// v3_platform_rotation; the caller resets the mock afterwards.
//
// How the SDK reaches the mock: wechatpay-node-v3 hard-codes
// https://api.mch.weixin.qq.com in every method and signs the URL with that
// origin cut off; its documented hook createHttp(service) replaces the HTTP
// layer (get/post/upload). The service below sends the same request to the
// mock's origin instead, and keeps the raw body and headers of the reply so
// that the SDK's verifySign can check them (the SDK does not verify replies
// by itself). downloadBill(url) cuts only WeChat's origin before signing, so
// the mock's download_url is handed to it under WeChat's origin.
'use strict';

const crypto = require('crypto');
const c = require('./v3_common');

const { cfg, want } = c;
const Pay = cfg.sdk('wechatpay-node-v3');
const WX = 'https://api.mch.weixin.qq.com';
const FEE = 301;
const OPENID = 'oSdkNodeV3Payer000000000000';

// The HTTP layer handed to createHttp: WeChat's origin -> the mock's.
function mockHttp() {
  const svc = { last: null };
  async function send(method, url, body, headers) {
    const h = Object.assign({}, headers);
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const r = await fetch(url.replace(WX, cfg.mock), { method, headers: h, body });
    const text = await r.text();
    let data = text;
    try { data = text ? JSON.parse(text) : ''; } catch (e) { /* a bill: text */ }
    svc.last = { status: r.status, text, headers: Object.fromEntries(r.headers.entries()) };
    return { status: r.status, data, text, headers: svc.last.headers,
      error: r.status >= 300 ? text : undefined };
  }
  svc.get = (url, headers) => send('GET', url, undefined, headers);
  svc.post = (url, params, headers) => send('POST', url, JSON.stringify(params), headers);
  svc.upload = () => { throw new Error('not used'); };
  return svc;
}

function client(privateKey) {
  const pay = new Pay({ appid: cfg.appid, mchid: cfg.mchid, publicKey: cfg.cert,
    privateKey: privateKey || cfg.key, serial_no: cfg.serial, key: cfg.apiv3 });
  const http = mockHttp();
  pay.createHttp(http);
  return { pay, http };
}

const { pay, http } = client();
const st = {};

// The SDK's verifySign over the reply it just got (raw body, Wechatpay-*).
async function verified(resp) {
  const h = resp.headers || {};
  const ok = await pay.verifySign({ timestamp: h['wechatpay-timestamp'], nonce: h['wechatpay-nonce'],
    body: resp.text, serial: h['wechatpay-serial'], signature: h['wechatpay-signature'],
    apiSecret: cfg.apiv3 });
  want(ok === true, `verifySign refused the mock's reply (serial ${h['wechatpay-serial']})`);
  return h['wechatpay-serial'];
}

// verifySign of a captured notification (raw body and headers).
function verifyNotification(n, raw) {
  const h = n.headers;
  return pay.verifySign({ timestamp: h['wechatpay-timestamp'], nonce: h['wechatpay-nonce'],
    body: raw === undefined ? n.raw : raw, serial: h['wechatpay-serial'],
    signature: h['wechatpay-signature'], apiSecret: cfg.apiv3 });
}

function decrypt(raw) {
  const r = JSON.parse(raw).resource;
  return pay.decipher_gcm(r.ciphertext, r.associated_data, r.nonce, cfg.apiv3);
}

async function nativeOrder(tag) {
  const otn = c.orderNo(tag);
  const r = await pay.transactions_native({ description: 'node-v3 sdk test', out_trade_no: otn,
    notify_url: `${st.base}/notify/${otn}`, amount: { total: FEE, currency: 'CNY' } });
  want(r.status === 200 && r.data && r.data.code_url, `transactions_native: ${r.status} ${r.text}`);
  await verified(r);
  return { otn, codeUrl: r.data.code_url };
}

const STEPS = [
  ['certificates', async () => {
    const certs = await pay.get_certificates(cfg.apiv3);
    want(Array.isArray(certs) && certs.length === 1, `get_certificates: ${JSON.stringify(certs)}`);
    await verified(http.last);
    st.serial1 = certs[0].serial_no;
    want(/BEGIN PUBLIC KEY/.test(certs[0].publicKey), 'no public key decrypted from the certificate');
    return `1 platform certificate ${st.serial1} decrypted (AEAD_AES_256_GCM, the APIv3 key), reply verified`;
  }],
  ['native', async () => {
    st.a = await nativeOrder('NA');
    want(/^weixin:\/\/wxpay\/bizpayurl\?pr=/.test(st.a.codeUrl), `code_url ${st.a.codeUrl}`);
    return `code_url=${st.a.codeUrl}, reply verified`;
  }],
  ['sign_refused', async () => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = client(privateKey.export({ type: 'pkcs8', format: 'pem' })).pay;
    const otn = c.orderNo('NX');
    const r = await other.transactions_native({ description: 'forged', out_trade_no: otn,
      notify_url: `${st.base}/notify/${otn}`, amount: { total: FEE } });
    want(r.status === 401 && /SIGN_ERROR/.test(r.error || ''), `another key: ${r.status} ${r.error}`);
    const q = await pay.query({ out_trade_no: otn });
    want(q.status === 404, `the refused order exists: ${q.status} ${q.text}`);
    return `another private key: 401 ${r.error}; the order was not created (query 404)`;
  }],
  ['payer_pay', async () => {
    want(st.a, 'needs native');
    const p = await c.payerPays(st.a.codeUrl, OPENID);
    st.txA = p.transaction_id;
    return `transaction_id=${st.txA}`;
  }],
  ['notify_pay', async () => {
    want(st.txA, 'needs payer_pay');
    const n = await c.waitFor(() => st.l.got.find(e => e.path === `/notify/${st.a.otn}`), 15000,
      'the payment notification');
    st.notePay = n;
    want(await verifyNotification(n) === true, 'verifySign refused the notification');
    const t = decrypt(n.raw);
    want(t.out_trade_no === st.a.otn && t.transaction_id === st.txA && t.trade_state === 'SUCCESS',
      `resource: ${JSON.stringify(t)}`);
    want(t.amount.total === FEE && t.payer.openid === OPENID, `amount/payer: ${JSON.stringify(t)}`);
    const j = await c.acknowledged(st.a.otn);
    return `verified and decrypted: ${JSON.parse(n.raw).event_type} ${t.trade_state} ${t.amount.total} fen; ` +
      `the mock journals the listener's HTTP ${j.http_status} as acknowledged`;
  }],
  ['notify_tampered', async () => {
    const n = st.notePay;
    want(n, 'needs notify_pay');
    const badCt = c.tamper(n.raw, 'ciphertext'), badTag = c.tamper(n.raw, 'tag');
    want(await verifyNotification(n, badCt) === false, 'verifySign accepted a changed ciphertext');
    want(await verifyNotification(n, badTag) === false, 'verifySign accepted a changed tag');
    let tagCaught = false;
    let plain;
    try { plain = decrypt(badTag); } catch (e) { tagCaught = true; }
    return 'verifySign refuses a changed ciphertext and a changed tag; decipher_gcm alone ' +
      (tagCaught ? 'refuses the changed tag too'
        : `does not check the tag (no decipher.final(): it returned ${typeof plain === 'object' ? 'the resource' : 'text'}), so the signature is the SDK's only guard`);
  }],
  ['query', async () => {
    const r = await pay.query({ out_trade_no: st.a.otn });
    want(r.status === 200 && r.data.trade_state === 'SUCCESS' && r.data.transaction_id === st.txA,
      `query: ${r.status} ${r.text}`);
    await verified(r);
    return `trade_state SUCCESS, transaction_id ${r.data.transaction_id}, success_time ${r.data.success_time}`;
  }],
  ['close_fresh', async () => {
    const b = await nativeOrder('NB');
    const k = await c.knobs();
    await c.setKnobs({ clock_offset_ms: k.clock_offset_ms + k.closeorder_min_age_ms + 1000 });
    const r = await pay.close(b.otn);
    want(r.status === 204, `close: ${r.status} ${r.text}`);
    await verified(r);
    const q = await pay.query({ out_trade_no: b.otn });
    want(q.status === 200 && q.data.trade_state === 'CLOSED', `query after close: ${q.status} ${q.text}`);
    const p = await c.admin('POST', '/mock/payer/pay', { code_url: b.codeUrl });
    want(p.json && p.json.err_code === 'ORDERCLOSED', `the payer paid a closed order: ${p.text}`);
    return `204 (signed empty body verified); query CLOSED; the payer is refused ${p.json.err_code}`;
  }],
  ['refund', async () => {
    want(st.txA, 'needs payer_pay');
    st.orn = `RN${st.a.otn}`;
    const r = await pay.refunds({ out_trade_no: st.a.otn, out_refund_no: st.orn,
      notify_url: `${st.base}/notify/refund-${st.orn}`, amount: { refund: FEE, total: FEE, currency: 'CNY' } });
    want(r.status === 200 && r.data.refund_id && r.data.status === 'PROCESSING', `refunds: ${r.status} ${r.text}`);
    await verified(r);
    return `refund_id ${r.data.refund_id}, status ${r.data.status}`;
  }],
  ['refund_query', async () => {
    want(st.orn, 'needs refund');
    const r = await c.waitFor(async () => {
      const q = await pay.find_refunds(st.orn);
      want(q.status === 200, `find_refunds: ${q.status} ${q.text}`);
      return q.data.status === 'SUCCESS' ? q : null;
    }, 15000, 'the refund to end SUCCESS');
    await verified(r);
    return `status SUCCESS, success_time ${r.data.success_time}`;
  }],
  ['notify_refund', async () => {
    want(st.orn, 'needs refund');
    const n = await c.waitFor(() => st.l.got.find(e => e.path === `/notify/refund-${st.orn}`), 15000,
      'the refund notification');
    want(await verifyNotification(n) === true, 'verifySign refused the refund notification');
    const t = decrypt(n.raw);
    want(t.out_refund_no === st.orn && t.refund_status === 'SUCCESS' && t.amount.refund === FEE,
      `resource: ${JSON.stringify(t)}`);
    return `${JSON.parse(n.raw).event_type}: ${t.refund_status}, ${t.amount.refund} fen`;
  }],
  ['tradebill', async () => {
    want(st.txA, 'needs payer_pay');
    const k = await c.knobs();
    const today = c.chinaDate(Date.now() + k.clock_offset_ms);
    const tomorrow = c.chinaDate(Date.parse(`${today}T12:00:00+08:00`) + 86400e3);
    await c.setKnobs({ clock_offset_ms: Date.parse(`${tomorrow}T11:00:00+08:00`) - Date.now() });
    const r = await pay.tradebill({ bill_date: today, bill_type: 'ALL' });
    want(r.status === 200 && r.data.download_url && r.data.hash_type === 'SHA1', `tradebill: ${r.status} ${r.text}`);
    await verified(r);
    const u = new URL(r.data.download_url);
    const d = await pay.downloadBill(WX + u.pathname + u.search);
    want(d.status === 200 && typeof d.data === 'string', `downloadBill: ${d.status} ${d.text}`);
    const sha1 = crypto.createHash('sha1').update(Buffer.from(d.text, 'utf8')).digest('hex');
    want(sha1 === r.data.hash_value, `SHA1 ${sha1} != hash_value ${r.data.hash_value}`);
    want(d.text.includes(`\`${st.a.otn},`) && d.text.includes(st.txA), `the bill lacks ${st.a.otn}`);
    return `bill of ${today} (the mock's yesterday): ${d.text.split('\r\n').length - 1} lines, ` +
      `SHA1 ${sha1} = hash_value; the paid order's lines are there`;
  }],
  ['rotation', async () => {
    await c.setKnobs({ v3_platform_rotation: 1 });
    const certs = await pay.get_certificates(cfg.apiv3);
    want(certs.length === 2, `rotation 1 serves ${certs.length} certificates`);
    const announced = certs.map(x => x.serial_no).find(s => s !== st.serial1);
    const q1 = await pay.query({ out_trade_no: st.a.otn });
    want(await verified(q1) === st.serial1, 'rotation 1 signs with the new certificate already');
    await c.setKnobs({ v3_platform_rotation: 2 });
    const q2 = await pay.query({ out_trade_no: st.a.otn });
    want(await verified(q2) === announced, `rotation 2 signs with ${q2.headers['wechatpay-serial']}`);
    return `1: ${certs.length} certificates served, still signed by ${st.serial1}; ` +
      `2: replies signed by ${announced}, verified by the SDK`;
  }],
];

(async () => {
  st.l = await c.listener(200);
  st.base = st.l.base;
  await c.setKnobs({ instant_charge: false });
  await c.run(STEPS);
  st.l.server.close();
  process.exit(0);
})().catch(e => { console.error(e); process.exit(1); });
