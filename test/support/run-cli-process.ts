import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/run-cli.js';

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const CLI_ENTRY = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Runs the `loopfleet` CLI from source in a real child process (tsx), with the given environment. */
export function runCliProcess(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`loopfleet ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs one CLI invocation in this process (`runCli`), with the given environment; its exit code and output. */
export async function runCliInProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env });
  return { code, out: out.join(''), err: err.join('') };
}
