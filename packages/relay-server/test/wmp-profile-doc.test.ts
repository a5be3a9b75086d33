// docs/wmp-profile.md says which codes the relay answers with: the ones it names for ERDS
// refusals (consignment mode, assurance level, policies) are the ones the relay uses (issue 23
// item 18; core §3.5 and §7.5.1.1 say -31005).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { erdsRefusal } from '../src/relay/federation/erds.js';

const profile = readFileSync(new URL('../../../docs/wmp-profile.md', import.meta.url), 'utf8');

describe('docs/wmp-profile.md', () => {
  it('names the code and data of ERDS refusals the relay sends', () => {
    // The sentence that names consignment mode refusals (one ends at ". " before a capital).
    const text = profile.replace(/\s+/g, ' ');
    const sentence = /(?:^|\. )([^.]*?consignment mode.*?\.)(?= [A-Z]|$)/i.exec(text)?.[1] ?? '';
    const refusal = erdsRefusal(['consignment_mode']);
    expect(sentence.match(/-3\d{4}/g), sentence).toEqual([String(refusal.code)]);
    expect(sentence).toContain('`data.unsupported`');
    expect(refusal.data).toMatchObject({ unsupported: ['consignment_mode'] });
  });
});
