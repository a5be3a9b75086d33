// Issue 12, item 4: single-use secrets used twice. Resumption tokens and challenges race in one
// batch and over two connections; a register racing a resume must neither revive the used token
// nor kill the new one. Several rounds each, so that a lost update would show.
import { generateKeypair } from '@wmp/jcs-signing';
import { describe, expect, it } from 'vitest';
import {
  authenticateRequest,
  createRequest,
  hostileTestbed,
  type Login,
  must,
  RawSocket,
  type RpcAnswer,
  rpc,
  VERSION,
} from '../fixtures/hostile-client.js';

const testbed = hostileTestbed();
const ROUNDS = 5;

const resume = (login: Login, token: string) =>
  rpc('wmp.session.resume', {
    wmp: { version: VERSION, sender: login.did },
    session_id: login.sessionId,
    resumption_token: token,
  });
const succeeded = (answers: readonly RpcAnswer[]) => answers.filter((a) => a.result !== undefined);

/** Whether `token` resumes `login`'s session now (on a fresh connection); the next token if so. */
async function tryResume(url: string, login: Login, token: string): Promise<string | undefined> {
  const socket = await RawSocket.open(url);
  const request = resume(login, token);
  const answer = await socket.call(request.method, request.params);
  await socket.close();
  return answer.result?.resumption_token;
}

describe('single-use secrets under concurrency (issue 12 item 4)', { timeout: 60_000 }, () => {
  it('a batch [resume(T), resume(T)] resumes once', async () => {
    const bed = await testbed.setup();
    const owner = await RawSocket.open(bed.url);
    const login = await owner.login();
    let token = login.token;
    for (let round = 0; round < ROUNDS; round++) {
      const thief = await RawSocket.open(bed.url);
      const answers = await thief.batch([resume(login, token), resume(login, token)]);
      const won = succeeded(answers);
      expect(won).toHaveLength(1);
      expect(answers.find((a) => a.error)!.error!.code).toBe(-31000);
      token = won[0]!.result.resumption_token;
      await thief.close();
    }
    expect(await tryResume(bed.url, login, token)).toBeDefined();
    await bed.checkHealthy();
  });

  it('resume(T) on two connections at once resumes once', async () => {
    const bed = await testbed.setup();
    const login = await (await RawSocket.open(bed.url)).login();
    let token = login.token;
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = [await RawSocket.open(bed.url), await RawSocket.open(bed.url)];
      const [ra, rb] = [resume(login, token), resume(login, token)];
      a.send(ra);
      b.send(rb);
      const answers = [await a.answer(ra.id), await b.answer(rb.id)];
      const won = succeeded(answers);
      expect(won).toHaveLength(1);
      token = won[0]!.result.resumption_token;
      await a.close();
      await b.close();
    }
    await bed.checkHealthy();
  });

  it('a batch [authenticate(ch), authenticate(ch)] authenticates once', async () => {
    const bed = await testbed.setup();
    const socket = await RawSocket.open(bed.url);
    for (let round = 0; round < ROUNDS; round++) {
      const keypair = generateKeypair();
      const created = must(await socket.call('wmp.session.create', createRequest(keypair.did).params));
      const sessionId = created.wmp.session_id as string;
      const answers = await socket.batch([
        await authenticateRequest(keypair, sessionId, created.challenge),
        await authenticateRequest(keypair, sessionId, created.challenge),
      ]);
      expect(succeeded(answers)).toHaveLength(1);
      expect(answers.find((a) => a.error)!.error!.code).toBe(-31002);
    }
    await bed.checkHealthy();
  });

  it('a batch [register, resume(t1)] neither revives t1 nor kills the new token', async () => {
    const bed = await testbed.setup();
    const socket = await RawSocket.open(bed.url);
    const login = await socket.login();
    let token = login.token;
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await socket.batch([rpc('wmp.relay.register', { wmp: login.wmp }), resume(login, token)]);
      expect(succeeded(answers)).toHaveLength(2);
      const used = token;
      token = answers[1]!.result.resumption_token;
      expect(await tryResume(bed.url, login, used)).toBeUndefined();
      // Still current: resuming with it (on another connection) gives the next one.
      token = (await tryResume(bed.url, login, token))!;
      expect(token).toBeDefined();
    }
    await bed.checkHealthy();
  });

  it('register on one connection racing resume(t1) on another neither revives t1 nor kills the new token', async () => {
    const bed = await testbed.setup();
    const owner = await RawSocket.open(bed.url);
    const login = await owner.login();
    let token = login.token;
    for (let round = 0; round < ROUNDS; round++) {
      const other = await RawSocket.open(bed.url);
      const [register, resumed] = [rpc('wmp.relay.register', { wmp: login.wmp }), resume(login, token)];
      // The resume first: the register reads the record while the resume's write is on its way.
      other.send(resumed);
      owner.send(register);
      must(await owner.answer(register.id));
      const used = token;
      token = must(await other.answer(resumed.id)).resumption_token;
      await other.close();
      expect(await tryResume(bed.url, login, used)).toBeUndefined();
      token = (await tryResume(bed.url, login, token))!;
      expect(token).toBeDefined();
    }
    await bed.checkHealthy();
  });
});
