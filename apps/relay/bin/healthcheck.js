#!/usr/bin/env node
// The container's health check (Dockerfile HEALTHCHECK): GET /health on this host's relay, exit 0
// when it answers 200. HTTPS when the relay serves TLS itself (WMP_TLS_CERT set; a relay whose
// TLS comes from a --config file is found by trying the other scheme), without checking the
// certificate's name: it is the public name, and this asks 127.0.0.1. Port: WMP_PORT or 8080.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const port = Number(process.env.WMP_PORT || 8080);
const tlsFirst = Boolean(process.env.WMP_TLS_CERT);

function check(tls) {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, path: '/health', timeout: 2500 };
    const request = tls
      ? httpsRequest({ ...options, rejectUnauthorized: false, minVersion: 'TLSv1.3' }, answered)
      : httpRequest(options, answered);
    function answered(response) {
      response.resume();
      resolve(response.statusCode === 200);
    }
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.end();
  });
}

process.exit((await check(tlsFirst)) || (await check(!tlsFirst)) ? 0 : 1);
