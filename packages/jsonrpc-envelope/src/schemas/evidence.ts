import * as v from 'valibot';
import { anyObject, stringList } from './common.js';
import { methodParams, notificationMethod } from './method-spec.js';

export const evidenceMethods = {
  // go-wmp and wmp-js send the evidence fields flat beside `wmp` (C8); the spec nests them in
  // `evidence`. Both shapes pass here; the evidence profile checks the content.
  'wmp.evidence.notify': notificationMethod(methodParams({ evidence: v.optional(anyObject) })),
  'wmp.evidence.ack': notificationMethod(
    methodParams({
      evidence_ids: v.pipe(stringList, v.minLength(1)),
      status: v.picklist(['accepted', 'rejected', 'stored']),
    }),
  ),
} as const;
