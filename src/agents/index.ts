export { agentDefinitionSchema, checkAgentDefinitions, defineAgent, type AgentDefinition } from './agent-definition.js';
export { agentVersion, canonicalJson } from './agent-version.js';
export { mcpServerEntrySchema, type McpServerEntry } from './mcp-entry.js';
export { defaultAgent, resolveAgent, type ResolvedAgent } from './resolve-agent.js';
