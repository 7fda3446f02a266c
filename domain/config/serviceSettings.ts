import { text } from './settingKinds.ts';

/** `/config` options of the service as a whole. */
export const SERVICE_SETTINGS = {
  /** The policy schema named in metalink documents. */
  policySchema: text('policy', 'schema', 'generic'),
  /** Origins allowed by the CORS pre-flight, comma-separated. */
  webuiUrls: text('webui', 'urls', ''),
} as const;
