import { readFileSync } from 'node:fs';

/**
 * The key variables that may instead be read from a file, and the variable naming that file: the
 * worker reads `OPENAI_API_KEY_FILE` (a compose or Kubernetes secret mounted as a file) as if its
 * contents were `OPENAI_API_KEY`, so the key never sits in the process environment of the container.
 */
export const KEY_FILE_VARIABLES = {
  OPENAI_API_KEY: 'OPENAI_API_KEY_FILE',
  ANTHROPIC_API_KEY: 'ANTHROPIC_API_KEY_FILE',
} as const;

/** One thing wrong with a key file, reported against the `*_FILE` variable. */
export interface KeyFileProblem {
  variable: string;
  message: string;
}

/** Reads a file's text; throws a Node error with a `code` (`ENOENT`, `EACCES`, `EISDIR` …). */
export type ReadKeyFile = (path: string) => string;

const readUtf8: ReadKeyFile = (path) => readFileSync(path, 'utf8');

/**
 * `env` with each key whose `*_FILE` variable is set replaced by the file's contents, trimmed (a
 * trailing newline is how most editors and `echo` write it). The file must exist and hold a key:
 * a missing, unreadable or empty file is a problem, as is setting both the key and its file.
 * Messages name the variable and never show the file's contents or its path (a key pasted into
 * the `*_FILE` variable by mistake would be its path).
 */
export function withKeyFiles(env: NodeJS.ProcessEnv, read: ReadKeyFile = readUtf8): { env: NodeJS.ProcessEnv; problems: KeyFileProblem[] } {
  const resolved: NodeJS.ProcessEnv = Object.assign({}, env);
  const problems: KeyFileProblem[] = [];
  for (const [keyVariable, fileVariable] of Object.entries(KEY_FILE_VARIABLES)) {
    const path = env[fileVariable]?.trim() ?? '';
    if (path === '') continue;
    if ((env[keyVariable]?.trim() ?? '') !== '') {
      problems.push({ variable: fileVariable, message: `set ${keyVariable} or ${fileVariable}, not both` });
      continue;
    }
    const outcome = readKey(path, read);
    if (typeof outcome === 'string') resolved[keyVariable] = outcome;
    else problems.push({ variable: fileVariable, message: outcome.problem });
  }
  return { env: resolved, problems };
}

function readKey(path: string, read: ReadKeyFile): string | { problem: string } {
  let contents: string;
  try {
    contents = read(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // The code only: Node's message repeats the path.
    return { problem: `cannot read the file it names (${typeof code === 'string' ? code : 'unreadable'})` };
  }
  const key = contents.trim();
  return key === '' ? { problem: 'the file it names is empty' } : key;
}
