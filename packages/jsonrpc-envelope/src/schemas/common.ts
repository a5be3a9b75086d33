import * as v from 'valibot';

/** Upper bounds that keep one field from dominating a message (the frame limit bounds the rest). */
export const MAX_IDENTIFIER_LENGTH = 2048;
export const MAX_LIST_LENGTH = 256;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const B64URL = /^[A-Za-z0-9_-]*$/;

export const nonEmptyString = v.pipe(v.string(), v.minLength(1));
/** A participant identifier of any WMP scheme (DID, x509:, https://, opaque ...). */
export const identifier = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_IDENTIFIER_LENGTH));
export const identifierList = v.pipe(v.array(identifier), v.maxLength(MAX_LIST_LENGTH));
export const stringList = v.pipe(v.array(v.string()), v.maxLength(MAX_LIST_LENGTH));
export const timestamp = v.pipe(
  v.string(),
  v.regex(RFC3339, 'must be an RFC 3339 date-time'),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'must be a valid date-time'),
);
export const base64url = v.pipe(v.string(), v.regex(B64URL, 'must be base64url'));
export const nonNegativeInteger = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
export const positiveInteger = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
export const anyObject = v.looseObject({});
