/** `GET /pods`: every pod on the node, short for `/api/v1/pods`. */
export { GET } from '../api/v1/pods.ts';
