// This package's local errors are one family: each a SessionError with a stable code and a fixed
// message.
import { describe, expect, it } from 'vitest';
import { expectErrorFamily } from '../../../test-support/error-family.js';
import {
  ConnectionClosedError,
  DidResolutionError,
  PeerError,
  RequestTimeoutError,
  SessionError,
} from '../src/index.js';
import { OutboundFetchError } from '../src/node.js';
import { CertificateParseError, parseTrustAnchors, X509IdentityError } from '../src/x509.js';

describe('the session errors', () => {
  it('all extend SessionError, each with its stable code and a fixed message', () => {
    expectErrorFamily(SessionError, [
      [new ConnectionClosedError(), 'ERR_CONNECTION_CLOSED', 'connection closed'],
      [new RequestTimeoutError(), 'ERR_REQUEST_TIMEOUT', 'request timed out'],
      [new PeerError('ERR_TOO_MANY_PENDING'), 'ERR_TOO_MANY_PENDING', 'too many pending requests'],
      [new DidResolutionError('timeout'), 'ERR_DID_RESOLUTION', 'did resolution failed: timeout'],
      [new OutboundFetchError('redirect'), 'redirect', 'redirects are not followed'],
      [new CertificateParseError('not_base64'), 'ERR_CERTIFICATE_PARSE', 'not base64'],
      [
        new X509IdentityError('key_mismatch'),
        'ERR_X509_IDENTITY',
        'privateKeyPem is not the key of the leaf certificate',
      ],
    ]);
  });

  it('are what the package throws: a bad trust anchor is a CertificateParseError with its reason', () => {
    const bad = () => parseTrustAnchors('-----BEGIN CERTIFICATE-----!!-----END CERTIFICATE-----');
    expect(bad).toThrow(SessionError);
    expect(bad).toThrow(expect.objectContaining({ code: 'ERR_CERTIFICATE_PARSE', reason: 'not_base64' }));
  });
});
