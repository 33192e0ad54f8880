/**
 * What the model is told when its reply hit the output token limit: as a notice after a plain reply,
 * or after all of a round's tool results when a call's arguments were cut off.
 */
export const TRUNCATION_NOTICE =
  '[notice] Your previous output was truncated because it hit the output token limit. Split the work into smaller steps or shorter tool arguments.';
