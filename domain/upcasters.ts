import { didUpcasters } from './did/didUpcasters.ts';
import { replicaUpcasters } from './replica/replicaUpcasters.ts';
import { requestUpcasters } from './request/requestUpcasters.ts';
import { upcasterRegistry } from './shared/upcasting.ts';

/**
 * Every upcaster the service applies to stored events (domain/shared/upcasting.ts), area by area.
 * A changed event shape adds its upcaster to its area's list; this registry finds it there.
 */
export const eventUpcasters = upcasterRegistry([...didUpcasters, ...replicaUpcasters, ...requestUpcasters]);
