import { LFN2PFN_ALGORITHMS } from './lfn2pfn.ts';
import { choice } from '../config/settingKinds.ts';

/** The `/config` options of RSEs. */
export const RSE_SETTINGS = {
  /** The lfn2pfn algorithm of RSEs without an `lfn2pfn_algorithm` attribute (rucio.common.config). */
  lfn2pfnDefault: choice('policy', 'lfn2pfn_algorithm_default', 'hash', LFN2PFN_ALGORITHMS),
} as const;
