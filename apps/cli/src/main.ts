#!/usr/bin/env node
// wmp: run one command line and exit with its code. The first Ctrl-C aborts the running command
// (long-running ones such as listen and connect stop cleanly); a second one exits at once.
import { runCli } from './cli.js';
import { ExitCode } from './errors.js';

const controller = new AbortController();
process.on('SIGINT', () => {
  if (controller.signal.aborted) process.exit(ExitCode.interrupted);
  controller.abort();
});

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
// Exit explicitly: a command is done when it returns, whatever timers or sockets a library left.
process.exit(code);
