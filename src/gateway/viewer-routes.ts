import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFoundHandler } from './errors.js';

/** Where `npm run build` puts the viewer: `dist/viewer` at the package root, from `src/gateway` and `dist/gateway` alike. */
export const VIEWER_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'viewer');

/**
 * The session viewer at `/`: its built files, and `index.html` for any other non-API GET so its
 * client-side routes load. Without a build, `/` answers 404 with a hint. Sets the not-found handler.
 */
export async function registerViewer(app: FastifyInstance, root: string = VIEWER_DIR): Promise<void> {
  if (!existsSync(join(root, 'index.html'))) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply.code(404).send({ error: { code: 'route.not_found', message: 'the viewer is not built here: run npm run build (it writes dist/viewer)' } }),
    );
    app.setNotFoundHandler(notFoundHandler);
    return;
  }
  await app.register(fastifyStatic, { root, prefix: '/', wildcard: true, index: ['index.html'], maxAge: 0 });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    if (request.method !== 'GET' || path.startsWith('/v1/') || path.startsWith('/assets/')) return notFoundHandler(request, reply);
    return reply.sendFile('index.html');
  });
}
