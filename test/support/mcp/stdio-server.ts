/**
 * The test MCP server over stdio, run as a child process: `node --import tsx stdio-server.ts`. Its
 * marks go to `MCP_TEST_STATE_DIR`.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createTestMcpServer } from './test-tools.js';

const stateDir = process.env['MCP_TEST_STATE_DIR'];
if (stateDir === undefined) throw new Error('MCP_TEST_STATE_DIR is not set');
await createTestMcpServer({ stateDir }).connect(new StdioServerTransport());
