/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The gateway's base URL, e.g. http://127.0.0.1:8080 (no trailing slash needed). */
  readonly VITE_GATEWAY_URL?: string;
  /** A bearer token for the gateway; leave it unset when it runs with GATEWAY_AUTH=none. */
  readonly VITE_GATEWAY_TOKEN?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
