import { JSON_ONLY, sendJson } from '../http.ts';
import type { RouteTable } from '../route.ts';
import { openApiDocument, type OpenApiDocument } from './openApiDocument.ts';

/**
 * `GET /openapi.json`, without a token: the OpenAPI 3.1 document of every route in the table,
 * made at the first request (every area has registered by then) and kept.
 */
export const registerOpenApiRoutes = (routes: RouteTable): void => {
  let document: OpenApiDocument | undefined;
  routes.get(
    '/openapi.json',
    {
      auth: false,
      accept: JSON_ONLY,
      commonHeaders: false,
      summary: 'This document: every route of the service in OpenAPI 3.1.',
    },
    (ctx) => {
      document ??= openApiDocument(routes.entries());
      sendJson(ctx, document);
    },
  );
};
