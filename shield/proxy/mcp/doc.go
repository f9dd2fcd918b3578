// Package mcp puts the appliance in front of an MCP server: a relay of JSON-RPC messages that
// decides every tools/call before the server sees it (tool name, arguments, and the server's own
// tools/list annotations as call labels mcp.readOnlyHint, mcp.destructiveHint,
// mcp.openWorldHint), answers a refused call with an isError result naming the rule, and narrows
// the client's roots/list answers to the workspace. Messages are bounded before they are parsed
// and parsed strictly (no duplicate members, valid UTF-8), so that what is decided is what the
// server reads. It also holds the line framing and strict parsing the Codex proxies reuse.
//
// Only cmd/shield and the other runtime adapters under shield/proxy import it.
package mcp
