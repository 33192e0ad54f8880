/** Largest value of a Postgres `integer` column (rounds, token counts, durations). */
export const INT4_MAX = 2_147_483_647;

/** Longest tool call id the ledger takes. */
export const TOOL_CALL_ID_MAX = 500;
