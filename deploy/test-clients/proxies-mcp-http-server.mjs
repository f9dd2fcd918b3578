// A Streamable HTTP MCP server built on the TypeScript SDK's own server transport (sessions,
// SSE, a GET stream), bound to 127.0.0.1, for deploy/test-clients/proxies.sh. Its one tool,
// write_file {path, content}, writes the file (annotated destructive, as the reference
// filesystem server's write_file is) and sends a progress notification before answering.
//
// Usage: node proxies-mcp-http-server.mjs PORT
import http from "node:http";
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

function makeServer() {
  const server = new McpServer({ name: "shield-test-http-server", version: "1.0.0" });
  server.registerTool("write_file", {
    description: "Write a file",
    inputSchema: { path: z.string(), content: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  }, async ({ path, content }, extra) => {
    const token = extra?._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2 } });
    }
    fs.writeFileSync(path, content);
    return { content: [{ type: "text", text: "wrote " + path }] };
  });
  return server;
}

const transports = {};
http.createServer(async (req, res) => {
  let body;
  if (req.method === "POST") {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  }
  const sid = req.headers["mcp-session-id"];
  let t = sid ? transports[sid] : undefined;
  if (!t) {
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => { transports[id] = t; } });
    await makeServer().connect(t);
  }
  await t.handleRequest(req, res, body);
}).listen(Number(process.argv[2]), "127.0.0.1", () => console.error("listening"));
