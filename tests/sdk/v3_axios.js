#!/usr/bin/env node
// v3_axios.js - npm wechatpay-axios-plugin (pinned in
// tests/sdk/package-lock.json), a WeChat Pay APIv3 SDK that no one here
// wrote, as the merchant against the mock. Its client signs every request
// and verifies every reply by itself (timestamp within 300 s, the platform
// serial it was given, the signature), so each step below also proves the
// mock's reply signatures; its AesGcm and Rsa decrypt and verify the
// notifications. Steps as in v3_node.js; its contract too (one JSON line per
// step, exit 0 when it could run; the caller resets the mock).
//
// How the SDK reaches the mock: its documented `baseURL` option (default
// https://api.mch.weixin.qq.com/); it signs the URL's path and query, which
// stay WeChat's. The platform certificates are fetched the way its own CLI
// (bin/cli/cert.js) does: one /v3/certificates call whose reply is
// decrypted with AesGcm before the verifier runs, then checked with
// Rsa.verify against the decrypted certificate.
'use strict';

const crypto = require('crypto');
const c = require('./v3_common');

const { cfg, want } = c;
const { Wechatpay, Rsa, Aes: { AesGcm }, Formatter } = cfg.sdk('wechatpay-axios-plugin');
const FEE = 302;
const OPENID = 'oSdkAxiosV3Payer00000000000';

function client(certs, privateKey) {
  return new Wechatpay({ baseURL: `${cfg.mock}/`, mchid: cfg.mchid, serial: cfg.serial,
    privateKey: privateKey || cfg.key, certs });
}

// The platform certificates, as the SDK's CLI downloads them: {serial: pem},
// the reply's signature checked against the certificate it names.
async function downloadCerts() {
  const seen = { certs: {} };
  const injector = function injector(data, headers) {
    seen.raw = data;
    seen.headers = headers;
    (JSON.parse(data).data || []).forEach(({ serial_no: s, encrypt_certificate: e }) => {
      seen.certs[s] = AesGcm.decrypt(e.ciphertext, cfg.apiv3, e.nonce, e.associated_data);
    });
    return data;
  };
  await client({ bootstrap: undefined }).v3.certificates.get({ transformResponse: [injector] });
  const h = seen.headers;
  const signer = seen.certs[h.get('Wechatpay-Serial')];
  want(signer, `the reply is signed by ${h.get('Wechatpay-Serial')}, not a served certificate`);
  want(Rsa.verify(Formatter.response(h.get('Wechatpay-Timestamp'), h.get('Wechatpay-Nonce'), seen.raw),
    h.get('Wechatpay-Signature'), Rsa.from(signer, Rsa.KEY_TYPE_PUBLIC)), 'the certificates reply does not verify');
  return seen.certs;
}

const st = {};

// The SDK's own checks of a captured notification (raw body, headers).
function verifyNotification(n, raw) {
  const h = n.headers;
  const pub = st.certs[h['wechatpay-serial']];
  want(pub, `the notification names serial ${h['wechatpay-serial']}, not a known certificate`);
  return Rsa.verify(Formatter.response(h['wechatpay-timestamp'], h['wechatpay-nonce'],
    raw === undefined ? n.raw : raw), h['wechatpay-signature'], Rsa.from(pub, Rsa.KEY_TYPE_PUBLIC));
}

function decrypt(raw) {
  const r = JSON.parse(raw).resource;
  return JSON.parse(AesGcm.decrypt(r.ciphertext, cfg.apiv3, r.nonce, r.associated_data));
}

async function nativeOrder(tag) {
  const otn = c.orderNo(tag);
  const r = await st.wx.v3.pay.transactions.native.post({ appid: cfg.appid, mchid: cfg.mchid,
    description: 'axios sdk test', out_trade_no: otn, notify_url: `${st.base}/notify/${otn}`,
    amount: { total: FEE, currency: 'CNY' } });
  want(r.status === 200 && r.data.code_url, `native: ${r.status} ${JSON.stringify(r.data)}`);
  return { otn, codeUrl: r.data.code_url };
}

const query = otn => st.wx.v3.pay.transactions.outTradeNo.$out_trade_no$.get({
  params: { mchid: cfg.mchid }, out_trade_no: otn });

// The HTTP status and body of a refused call (axios throws on 4xx/5xx).
async function refused(promise) {
  try {
    const r = await promise;
    return { status: r.status, data: r.data };
  } catch (e) {
    want(e.response, `no HTTP answer: ${e.message}`);
    return { status: e.response.status, data: e.response.data, error: e };
  }
}

const STEPS = [
  ['certificates', async () => {
    st.certs = await downloadCerts();
    const serials = Object.keys(st.certs);
    want(serials.length === 1 && /BEGIN CERTIFICATE/.test(st.certs[serials[0]]), `certs: ${serials}`);
    st.serial1 = serials[0];
    st.wx = client(st.certs);
    const again = await st.wx.v3.certificates.get();   /* now verified by the client itself */
    want(again.status === 200 && again.data.data.length === 1, `certificates: ${again.status}`);
    return `1 platform certificate ${st.serial1} decrypted with AesGcm, its reply verified by Rsa.verify; ` +
      'a second call verified by the client';
  }],
  ['native', async () => {
    st.a = await nativeOrder('XA');
    return `code_url=${st.a.codeUrl} (reply verified by the client)`;
  }],
  ['sign_refused', async () => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = client(st.certs, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const otn = c.orderNo('XX');
    const r = await refused(other.v3.pay.transactions.native.post({ appid: cfg.appid, mchid: cfg.mchid,
      description: 'forged', out_trade_no: otn, notify_url: `${st.base}/notify/${otn}`, amount: { total: FEE } }));
    want(r.status === 401 && r.data.code === 'SIGN_ERROR', `another key: ${r.status} ${JSON.stringify(r.data)}`);
    const q = await refused(query(otn));
    want(q.status === 404, `the refused order exists: ${q.status}`);
    return `another private key: 401 ${JSON.stringify(r.data)}; the order was not created (query 404)`;
  }],
  ['payer_pay', async () => {
    want(st.a, 'needs native');
    st.txA = (await c.payerPays(st.a.codeUrl, OPENID)).transaction_id;
    return `transaction_id=${st.txA}`;
  }],
  ['notify_pay', async () => {
    want(st.txA, 'needs payer_pay');
    const n = await c.waitFor(() => st.l.got.find(e => e.path === `/notify/${st.a.otn}`), 15000,
      'the payment notification');
    st.notePay = n;
    want(verifyNotification(n) === true, 'Rsa.verify refused the notification');
    const t = decrypt(n.raw);
    want(t.out_trade_no === st.a.otn && t.transaction_id === st.txA && t.trade_state === 'SUCCESS' &&
      t.amount.total === FEE && t.payer.openid === OPENID, `resource: ${JSON.stringify(t)}`);
    const j = await c.acknowledged(st.a.otn);
    return `verified (Rsa.verify) and decrypted (AesGcm): ${t.trade_state} ${t.amount.total} fen; ` +
      `the mock journals the listener's HTTP ${j.http_status} as acknowledged`;
  }],
  ['notify_tampered', async () => {
    const n = st.notePay;
    want(n, 'needs notify_pay');
    const out = [];
    for (const which of ['ciphertext', 'tag']) {
      const bad = c.tamper(n.raw, which);
      want(verifyNotification(n, bad) === false, `Rsa.verify accepted a changed ${which}`);
      let threw = null;
      try { decrypt(bad); } catch (e) { threw = e.message; }
      want(threw, `AesGcm.decrypt accepted a changed ${which}`);
      out.push(`${which}: signature refused, AesGcm.decrypt throws "${threw}"`);
    }
    return out.join('; ');
  }],
  ['query', async () => {
    const r = await query(st.a.otn);
    want(r.status === 200 && r.data.trade_state === 'SUCCESS' && r.data.transaction_id === st.txA,
      `query: ${r.status} ${JSON.stringify(r.data)}`);
    return `trade_state SUCCESS, transaction_id ${r.data.transaction_id}`;
  }],
  ['close_fresh', async () => {
    const b = await nativeOrder('XB');
    const k = await c.knobs();
    await c.setKnobs({ clock_offset_ms: k.clock_offset_ms + k.closeorder_min_age_ms + 1000 });
    const r = await st.wx.v3.pay.transactions.outTradeNo.$out_trade_no$.close.post(
      { mchid: cfg.mchid }, { out_trade_no: b.otn });
    want(r.status === 204, `close: ${r.status}`);
    const q = await query(b.otn);
    want(q.data.trade_state === 'CLOSED', `query after close: ${JSON.stringify(q.data)}`);
    const p = await c.admin('POST', '/mock/payer/pay', { code_url: b.codeUrl });
    want(p.json && p.json.err_code === 'ORDERCLOSED', `the payer paid a closed order: ${p.text}`);
    return `204 (verified by the client); query CLOSED; the payer is refused ${p.json.err_code}`;
  }],
  ['refund', async () => {
    want(st.txA, 'needs payer_pay');
    st.orn = `RX${st.a.otn}`;
    const r = await st.wx.v3.refund.domestic.refunds.post({ transaction_id: st.txA, out_refund_no: st.orn,
      notify_url: `${st.base}/notify/refund-${st.orn}`, amount: { refund: FEE, total: FEE, currency: 'CNY' } });
    want(r.status === 200 && r.data.refund_id && r.data.status === 'PROCESSING', `refund: ${JSON.stringify(r.data)}`);
    return `refund_id ${r.data.refund_id}, status ${r.data.status}`;
  }],
  ['refund_query', async () => {
    want(st.orn, 'needs refund');
    const r = await c.waitFor(async () => {
      const q = await st.wx.v3.refund.domestic.refunds.$out_refund_no$.get({ out_refund_no: st.orn });
      return q.data.status === 'SUCCESS' ? q : null;
    }, 15000, 'the refund to end SUCCESS');
    return `status SUCCESS, success_time ${r.data.success_time}`;
  }],
  ['notify_refund', async () => {
    want(st.orn, 'needs refund');
    const n = await c.waitFor(() => st.l.got.find(e => e.path === `/notify/refund-${st.orn}`), 15000,
      'the refund notification');
    want(verifyNotification(n) === true, 'Rsa.verify refused the refund notification');
    const t = decrypt(n.raw);
    want(t.out_refund_no === st.orn && t.refund_status === 'SUCCESS', `resource: ${JSON.stringify(t)}`);
    return `${JSON.parse(n.raw).event_type}: ${t.refund_status}, ${t.amount.refund} fen`;
  }],
  ['tradebill', async () => {
    want(st.txA, 'needs payer_pay');
    const k = await c.knobs();
    const today = c.chinaDate(Date.now() + k.clock_offset_ms);
    const tomorrow = c.chinaDate(Date.parse(`${today}T12:00:00+08:00`) + 86400e3);
    await c.setKnobs({ clock_offset_ms: Date.parse(`${tomorrow}T11:00:00+08:00`) - Date.now() });
    const r = await st.wx.v3.bill.tradebill.get({ params: { bill_date: today, bill_type: 'ALL' } });
    want(r.status === 200 && r.data.hash_type === 'SHA1', `tradebill: ${JSON.stringify(r.data)}`);
    const token = new URL(r.data.download_url).searchParams.get('token');
    const d = await st.wx.v3.billdownload.file.get({ params: { token }, responseType: 'arraybuffer' });
    const bytes = Buffer.from(d.data);
    const sha1 = crypto.createHash('sha1').update(bytes).digest('hex');
    want(sha1 === r.data.hash_value, `SHA1 ${sha1} != hash_value ${r.data.hash_value}`);
    const text = bytes.toString('utf8');
    want(text.includes(`\`${st.a.otn},`) && text.includes(st.txA), `the bill lacks ${st.a.otn}`);
    return `bill of ${today} (the mock's yesterday): ${bytes.length} bytes, SHA1 = hash_value; ` +
      'the paid order is there';
  }],
  ['rotation', async () => {
    await c.setKnobs({ v3_platform_rotation: 1 });
    const certs = await st.wx.v3.certificates.get();   /* still signed by the first: verified */
    want(certs.data.data.length === 2, `rotation 1 serves ${certs.data.data.length}`);
    await c.setKnobs({ v3_platform_rotation: 2 });
    const stale = await refused(query(st.a.otn));
    const code = stale.error && stale.error.code;
    want(code === 'EV3_RES_HEADER_PLATFORM_SERIAL', `a client knowing only the old certificate: ${code || stale.status}`);
    st.certs = await downloadCerts();
    st.wx = client(st.certs);
    const q = await query(st.a.otn);
    want(q.status === 200 && q.headers['wechatpay-serial'] !== st.serial1, 'rotation 2 still signs with the old one');
    return `1: 2 certificates served; 2: the old client refuses the new serial (${code}), ` +
      `a client with the fetched certificates verifies ${q.headers['wechatpay-serial']}`;
  }],
];

(async () => {
  st.l = await c.listener(204);
  st.base = st.l.base;
  await c.setKnobs({ instant_charge: false });
  await c.run(STEPS);
  st.l.server.close();
  process.exit(0);
})().catch(e => { console.error(e); process.exit(1); });
