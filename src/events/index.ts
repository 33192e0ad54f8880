/**
 * Redis event streams (docs/client.md, "Subscribing"): the worker's publisher and the subscribers'
 * readers of `<queue>:events:<sessionId>`.
 */
export type {
  EventEnvelopeFields,
  FleetEvent,
  FleetEventType,
  LifecycleEvent,
  StreamEvent,
  StreamGap,
  StreamItem,
} from '../fleet/fleet-events.js';
export { publisherConnection, RedisEventPublisher } from './event-publisher.js';
export {
  EVENT_PUBLISHER_DEFAULTS,
  resolveEventPublisherOptions,
  type EventPublishErrorContext,
  type EventPublisherConfig,
  type EventPublisherOptions,
} from './event-publisher-options.js';
export type { RunEventSink } from './run-event-sink.js';
export { DeltaCoalescer, type PendingEvent, type ReleasedEvent } from './delta-coalescer.js';
export { encodeEvent, dataText, type EncodedEvent } from './event-body.js';
export { parseStreamEntry, isMalformed, type RawStreamEntry, type RawXReadReply } from './stream-entry.js';
export { decideGap, detectGap, SeqGapTracker, type StreamRetention } from './stream-gap.js';
export { compareStreamIds, isStreamId, FROM_START, ONLY_NEW } from './stream-id.js';
export {
  readSessionEvents,
  readRange,
  lastEventId,
  type ReadSessionEventsOptions,
  type ReadRangeOptions,
} from './event-subscriber.js';
