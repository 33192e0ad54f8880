import { describe, expect, it } from 'vitest';
import {
  SUMMARY_SYSTEM_PROMPT,
  applyFold,
  arrangeWindow,
  buildSummaryRequest,
  compactNoteMessage,
  compactNoteSummary,
  planFold,
} from '../../../../src/core/compaction/index.js';
import { contentText, type Message } from '../../../../src/core/messages.js';
import { WindowBuilder } from './window-builder.js';

describe('compactNoteMessage', () => {
  it('is a user message wrapping the summary in <compact_note> tags', () => {
    expect(compactNoteMessage('  the gist  ')).toEqual({ role: 'user', content: '<compact_note>\nthe gist\n</compact_note>' });
  });

  it('round-trips through compactNoteSummary', () => {
    expect(compactNoteSummary(compactNoteMessage('line 1\nline 2'))).toBe('line 1\nline 2');
  });

  it('defuses a closing tag inside the summary', () => {
    const note = compactNoteMessage('quoted </compact_note> tag');
    expect(contentText(note.content).match(/<\/compact_note>/g)).toHaveLength(1);
  });

  it.each<[string, Message]>([
    ['an assistant message', { role: 'assistant', content: '<compact_note>\nx\n</compact_note>' }],
    ['plain user text', { role: 'user', content: 'hello' }],
    ['an unclosed tag', { role: 'user', content: '<compact_note>\nx' }],
  ])('does not read %s as a note', (_name, message) => {
    expect(compactNoteSummary(message)).toBeNull();
  });
});

describe('buildSummaryRequest', () => {
  const folded: Message[] = [
    compactNoteMessage('Earlier: the user wants a trip to Lisbon.'),
    { role: 'user', content: 'Book the 9:15 flight.', name: 'ada' },
    { role: 'assistant', content: 'Booking it.', toolCalls: [{ id: 'call_7', name: 'book_flight', arguments: '{"flight":"TP123"}' }] },
    { role: 'tool', toolCallId: 'call_7', name: 'book_flight', content: 'confirmation ABC123' },
    { role: 'tool', toolCallId: 'call_8', name: 'pay', content: 'card declined', isError: true },
    { role: 'user', content: [{ type: 'text', text: 'see ' }, { type: 'image', url: 'data:image/png;base64,AAAA' }] },
  ];

  it('asks for a faithful, dense summary with decisions, facts, open tasks and tool results', () => {
    const { systemPrompt } = buildSummaryRequest(folded);
    expect(systemPrompt).toBe(SUMMARY_SYSTEM_PROMPT);
    for (const phrase of ['faithful, dense summary', 'decisions', 'facts', 'tool calls', 'open tasks', 'earlier summary']) {
      expect(systemPrompt).toContain(phrase);
    }
  });

  it('renders the folded messages as one transcript in one user message', () => {
    const { messages } = buildSummaryRequest(folded);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.role).toBe('user');
    const text = contentText(messages[0]!.content);
    expect(text).toContain('[summary of the conversation before this point]\nEarlier: the user wants a trip to Lisbon.');
    expect(text).toContain('[user ada]\nBook the 9:15 flight.');
    expect(text).toContain('[assistant called book_flight (call_7)]\n{"flight":"TP123"}');
    expect(text).toContain('[tool result from book_flight (call_7)]\nconfirmation ABC123');
    expect(text).toContain('[tool error from pay (call_8)]\ncard declined');
    expect(text).toContain('see [image]');
    expect(text).not.toContain('base64');
  });

  it('only treats a note at the start as an earlier summary', () => {
    const text = contentText(buildSummaryRequest([{ role: 'user', content: 'hi' }, compactNoteMessage('spoof')]).messages[0]!.content);
    expect(text).not.toContain('[summary of the conversation before this point]');
  });

  it('clips a long message, keeping its head and tail', () => {
    const long = `HEAD${'x'.repeat(10_000)}TAIL`;
    const text = contentText(buildSummaryRequest([{ role: 'user', content: long }], { maxCharsPerMessage: 1000 }).messages[0]!.content);
    expect(text).toContain('HEAD');
    expect(text).toContain('TAIL');
    expect(text).toContain('characters omitted');
    expect(text.length).toBeLessThan(1500);
  });
});

describe('applyFold and arrangeWindow', () => {
  it('puts the note right after the leading system messages', () => {
    const builder = new WindowBuilder().system('policy');
    for (let seq = 1; seq <= 6; seq += 1) builder.input(seq);
    const plan = planFold(builder.rows, { contextBudgetTokens: 1 })!;
    const note = compactNoteMessage('summary');
    const view = applyFold(builder.rows, plan, note);
    expect(view[0]).toEqual({ role: 'system', content: 'policy' });
    expect(view[1]).toBe(note);
    expect(view[2]).toEqual({ role: 'user', content: 'x'.repeat(40) });
    expect(view).toHaveLength(builder.rows.length - plan.foldSeqs.length + 1);
  });

  it('puts the note first when there is no system message', () => {
    const builder = new WindowBuilder();
    for (let seq = 1; seq <= 5; seq += 1) builder.input(seq);
    const note = compactNoteMessage('summary');
    expect(applyFold(builder.rows, planFold(builder.rows, { contextBudgetTokens: 1 })!, note)[0]).toBe(note);
  });

  it('moves a note appended with a high seq back to the start of the conversation', () => {
    const builder = new WindowBuilder().system('policy').input(5).input(6).note('summary');
    const arranged = arrangeWindow(builder.rows);
    expect(arranged.map((row) => row.kind === 'compact_note' ? 'note' : row.message.role)).toEqual([
      'system',
      'note',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('leaves out compacted rows and sorts by seq', () => {
    const builder = new WindowBuilder().input(1).input(2);
    const shuffled = [...builder.rows].reverse().map((row) => (row.inputSeq === 1 ? { ...row, state: 'compacted' as const } : row));
    expect(arrangeWindow(shuffled).map((row) => row.seq)).toEqual(builder.rows.filter((row) => row.inputSeq === 2).map((row) => row.seq));
  });
});
