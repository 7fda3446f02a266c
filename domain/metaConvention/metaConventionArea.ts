import { domainArea } from '../shared/domainArea.ts';
import { META_CONVENTION_EVENT_TYPES } from './metaConvention.ts';

/** Metadata conventions; their events concern no subject. */
export const metaConventionArea = domainArea({
  name: 'metaConvention',
  events: META_CONVENTION_EVENT_TYPES,
  upcasters: [],
  settings: {},
  audit: {},
});
