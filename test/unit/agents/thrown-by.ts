/** What `fn` throws, for assertions on a typed error's code and message; fails when it returns. */
export function thrownBy(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a throw');
}
