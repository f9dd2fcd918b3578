// Package modelguard is a reverse proxy in front of a model API (OpenAI Responses, OpenAI chat
// completions, Anthropic Messages) that reads the tool calls in the model's answer, streamed
// (server-sent events) or not (JSON), and asks the appliance about each one before the runtime
// sees it: the one seam that needs no cooperation from the agent runtime.
//
// What the runtime receives is only what the guard produced from events it parsed and approved:
//   - text, thinking and every other non-tool event pass byte for byte, flushed as they arrive,
//     until a tool call starts; from then on events are held in order;
//   - a tool call's events (its start, every argument delta, its end) are buffered until the call
//     is complete, then decided (client.Decide with hold: an ESCALATE waits for a human within
//     Options.Hold); an ALLOWed call is released unchanged, followed by whatever was held behind it;
//   - a call whose decision is not ALLOW — BLOCK, ESCALATE not approved in time, the appliance
//     unreachable, arguments that are not one strict JSON object, over a bound, or inconsistent
//     between deltas and the final item — is replaced, at the same index, by a text block /
//     message saying which call was stopped and naming the rule; stop and finish reasons are
//     adjusted ("tool_use" → "end_turn", "tool_calls" → "stop") when no call of the answer is
//     left, event sequence numbers are renumbered, and the final response object (Responses
//     API response.completed) is rewritten the same way.
//
// Why replace instead of failing the response with an API error: the runtimes retry API errors
// (a 5xx or a broken stream is retried, and the model proposes the same call again), and an
// error mid-stream throws away the text the model already wrote. A replaced call ends the turn
// cleanly, the user reads which call was stopped and why, and the model reads it in its own
// history on the next turn. The stream stays one the runtime's own parser accepts: same event
// order, same indices, a terminal event it expects. Only a stream the guard cannot read (over a
// bound, malformed SSE or JSON, an event name that disagrees with its type, content where none
// may be) is failed, with an error event in the API's own format, and nothing after it is sent.
//
// Events are parsed strictly (no duplicate members at any depth, valid UTF-8, bounded nesting),
// so that what the appliance decided is what the runtime's parser reads; SSE lines, events, a
// call's arguments and the bytes held while a call is decided are bounded before parsing.
// Tools the vendor runs itself (Anthropic server_tool_use, Responses web_search_call, mcp_call, …)
// are executed before the answer reaches the guard and pass unchanged.
//
// Only cmd/shield imports it.
package modelguard
