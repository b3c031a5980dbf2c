// Lines of `claude -p --output-format stream-json` recognised without JSON.parse, in the exact shapes
// Claude Code prints them. Each pattern admits only valid JSON of its shape (keys in order, no key twice,
// plain strings where a value is taken as it stands), so what the parser makes of a matched line is what
// the full parse makes of it: anything that differs in the least goes through the full parse. The parser
// uses them once the session id is known, which the first line gives.
//
// Most lines of a streamed turn are of these shapes. Matching one takes a fraction of what JSON.parse
// takes (a 500-byte message_start: 7 µs to parse, on a machine where the whole parse + persist of an event
// has 20 µs to stay at 50,000 events/s).

const PLAIN_STRING = String.raw`"[^"\\\x00-\x1f]*"`
const JSON_STRING = String.raw`"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`
const JSON_INDEX = String.raw`(?:0|[1-9]\d*)`
const JSON_NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`
const JSON_SCALAR = String.raw`(?:null|true|false|${JSON_NUMBER}|${JSON_STRING})`
const FLAT_OBJECT = String.raw`\{(?:${PLAIN_STRING}:${JSON_SCALAR}(?:,${PLAIN_STRING}:${JSON_SCALAR})*)?\}`
/** What follows the event of every stream_event line: its session, sub-agent and line ids. */
const STREAM_EVENT_IDS = String.raw`"session_id":${PLAIN_STRING},"parent_tool_use_id":(null|${PLAIN_STRING}),"uuid":${PLAIN_STRING}`

/**
 * Lines that the full parse drops: status pings, the raw stream events whose content comes again whole in
 * the `assistant` lines, tool-input deltas.
 */
const IGNORED_STREAM_EVENT = [
  String.raw`"(?:content_block_stop|message_stop|ping)"(?:,"index":${JSON_INDEX})?\}`,
  String.raw`"content_block_delta","index":${JSON_INDEX},"delta":\{"type":"input_json_delta","partial_json":${JSON_STRING}\}\}`,
  String.raw`"content_block_start","index":${JSON_INDEX},"content_block":\{"type":(?:"text","text":""|"tool_use","id":${PLAIN_STRING},"name":${PLAIN_STRING},"input":\{\})\}\}`,
  String.raw`"message_delta","delta":${FLAT_OBJECT},"usage":${FLAT_OBJECT}\}`,
].join('|')
export const CLAUDE_IGNORED_LINE = new RegExp(
  String.raw`^\{"type":(?:` +
    String.raw`"system","subtype":"status","status":${PLAIN_STRING},"session_id":${PLAIN_STRING},"uuid":${PLAIN_STRING}\}` +
    String.raw`|"stream_event","event":\{"type":(?:${IGNORED_STREAM_EVENT}),${STREAM_EVENT_IDS}` +
    String.raw`(?:,"api_message_id":${PLAIN_STRING})?\}` +
    ')$',
)

/**
 * A streamed piece of text or thinking (partial messages). Groups: 1 `text` or `thinking`, 2 the piece as
 * a JSON string, 3 the parent tool call's id as a JSON string (or `null`), 4 `api_message_id` as a JSON
 * string, when there is one.
 */
export const CLAUDE_DELTA_LINE = new RegExp(
  String.raw`^\{"type":"stream_event","event":\{"type":"content_block_delta","index":${JSON_INDEX},` +
    String.raw`"delta":\{"type":"(text|thinking)_delta","\1":(${JSON_STRING})\}\},${STREAM_EVENT_IDS}` +
    String.raw`(?:,"api_message_id":(${PLAIN_STRING}))?\}$`,
)

/**
 * The start of a streamed message: only its id is read (the deltas that follow belong to it). Group 1 is
 * the id as a JSON string.
 */
export const CLAUDE_MESSAGE_START_LINE = new RegExp(
  String.raw`^\{"type":"stream_event","event":\{"type":"message_start","message":\{"id":(${PLAIN_STRING}),` +
    String.raw`"type":"message","role":"assistant","model":${PLAIN_STRING},"content":\[\],"stop_reason":null,` +
    String.raw`(?:"stop_sequence":null,)?"usage":${FLAT_OBJECT}\}\},${STREAM_EVENT_IDS}` +
    String.raw`(?:,"ttft_ms":${JSON_NUMBER})?(?:,"thinking_display":${PLAIN_STRING})?(?:,"api_message_id":${PLAIN_STRING})?\}$`,
)

/**
 * A whole message of text alone, as Claude Code prints it after streaming its pieces (and without partial
 * messages, instead of them). Groups: 1 the message id, 2 its model, 3 the text, each as a JSON string;
 * 4 the parent tool call's id as a JSON string (or `null`).
 */
export const CLAUDE_TEXT_MESSAGE_LINE = new RegExp(
  String.raw`^\{"type":"assistant","message":\{"id":(${PLAIN_STRING}),"type":"message","role":"assistant",` +
    String.raw`"model":(${PLAIN_STRING}),"content":\[\{"type":"text","text":(${JSON_STRING})\}\],` +
    String.raw`"stop_reason":null,(?:"stop_sequence":null,)?"usage":${FLAT_OBJECT}(?:,"context_management":null)?\},` +
    String.raw`"parent_tool_use_id":(null|${PLAIN_STRING}),"session_id":${PLAIN_STRING},"uuid":${PLAIN_STRING}` +
    String.raw`(?:,"timestamp":${PLAIN_STRING})?\}$`,
)

/** The value of a JSON string a pattern above matched (most have no escape: taken as they stand). */
export function jsonStringValue(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1)
}
