// A real MCP client (the TypeScript SDK) for deploy/test-clients/proxies.sh: it launches the
// server command given after "--" (there: `shield proxy mcp … -- node server-filesystem ROOT`),
// optionally offers roots, calls one tool and prints {"isError":…,"text":…} on one line.
//
// Usage: node proxies-mcp-client.mjs ROOTS_JSON|- TOOL ARGS_JSON -- COMMAND [ARGS…]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const [rootsArg, tool, argsJSON] = argv.slice(0, sep);
const [command, ...args] = argv.slice(sep + 1);
const roots = rootsArg === "-" ? null : JSON.parse(rootsArg);

const client = new Client({ name: "shield-test-client", version: "1.0.0" },
  { capabilities: roots ? { roots: { listChanged: true } } : {} });
let rootsAnswered;
const rootsDone = new Promise((resolve) => { rootsAnswered = resolve; });
if (roots) {
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    setTimeout(rootsAnswered, 300); // let the server apply the answer before the call
    return { roots };
  });
}
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
await client.connect(transport);
if (roots) await Promise.race([rootsDone, new Promise((r) => setTimeout(r, 5000))]);
await client.listTools();
let out;
try {
  const res = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) }, undefined, { timeout: 120000 });
  out = { isError: !!res.isError, text: (res.content || []).map((c) => c.text || "").join("\n") };
} catch (e) {
  out = { isError: true, text: "client error: " + e.message };
}
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
