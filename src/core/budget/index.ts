/** Token estimates of messages and histories, for the context budget and the compaction trigger. */
export {
  CHARS_PER_TOKEN,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  estimateMessageTokens,
  estimateMessagesTokens,
  estimateTextTokens,
} from './estimate-tokens.js';
