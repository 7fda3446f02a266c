import { pathOf } from '../../params.ts';
import { archiveContent } from '../../../projections/did/archiveQueries.ts';
import type { ArchiveContentDocument } from '../../../projections/did/archiveContentsProjection.ts';
import { mapStream, sendStream, STREAM_ONLY } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { scopeNamePath } from './didParams.ts';

/** A constituent as `list_archive_content` gives it. */
const constituentJson = (row: ArchiveContentDocument) => ({
  scope: row.scope,
  name: row.name,
  bytes: row.bytes,
  adler32: row.adler32,
  md5: row.md5,
});

/**
 * GET /archives/{scope}/{name}/files: the files inside an archive file, as NDJSON. As Rucio's, it
 * answers an empty list, not an error, for a DID that is no archive or does not exist.
 */
export const registerArchiveRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/archives/*scope_name/files',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The constituents of an archive file (none for any other DID).',
    },
    async (ctx, { params }) => {
      const did = params.scope_name;
      await sendStream(ctx, mapStream(archiveContent(services.readModels, did.scope, did.name), constituentJson));
    },
  );
};
