import type { ObjectService } from '../records/object-service.js';
import { serviceFor } from '../records/object-service.js';

/** The people's service: the generic ObjectService for `people` (its provider class). */
export const PeopleService = serviceFor('people');
export type PeopleService = ObjectService;
