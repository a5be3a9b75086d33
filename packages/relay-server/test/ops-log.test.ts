import { describe, expect, it } from 'vitest';
import { createJsonLogger, OpsLog } from '../src/index.js';

describe('OpsLog', () => {
  it('writes each event at its level, at most 100 a second, and says how many it left out', () => {
    let now = 1_000_000;
    const lines: Record<string, unknown>[] = [];
    const logger = createJsonLogger({ level: 'debug', write: (l) => lines.push(JSON.parse(l)), now: () => now });
    const ops = new OpsLog(logger, () => now);
    for (let i = 0; i < 150; i++) ops.event('auth.refused', { code: -31002 });
    ops.event('box.request', { route: 'publish', status: 202 });
    expect(lines.filter((l) => l.event === 'auth.refused')).toHaveLength(100);
    expect(lines.at(-1)).toMatchObject({ event: 'box.request', level: 'debug' });
    now += 1000;
    ops.event('auth.refused', { code: -31002 });
    expect(lines.at(-1)).toMatchObject({ event: 'auth.refused', level: 'info', code: -31002, suppressed: 50 });
    ops.event('auth.refused', { code: -31002 });
    expect(lines.at(-1)).not.toHaveProperty('suppressed');
  });
});
