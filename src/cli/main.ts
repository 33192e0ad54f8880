#!/usr/bin/env node
import { runCli } from './run-cli.js';

// A reader that stops early (`loopfleet tail … | head -1`) closes the pipe: what is left to print has
// nowhere to go, which is how such a pipeline ends, not a failure to report with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  isTty: process.stdout.isTTY === true,
  readStdin: async () => {
    if (process.stdin.isTTY === true) process.stderr.write('# reading the text from the terminal; end it with Ctrl-D\n');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
});
process.exitCode = code;
// The work is done and every connection closed, but a connection closed while still connecting
// leaves a timer of its driver behind (ioredis waits 2 s for the socket to end): the process exits
// now instead, once what it printed has been handed to the OS.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
