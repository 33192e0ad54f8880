export { agentDefinitionSchema, checkAgentDefinitions, defineAgent, type AgentDefinition } from './agent-definition.js';
export { agentVersion, canonicalJson } from './agent-version.js';
export { mcpServerEntrySchema, type McpServerEntry } from './mcp-entry.js';
export { DEFAULT_AGENT_NAME, defaultAgent, resolveAgent, type ResolvedAgent } from './resolve-agent.js';
