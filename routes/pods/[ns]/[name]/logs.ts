/** `GET /pods/{ns}/{name}/logs`: short for `/api/v1/namespaces/{ns}/pods/{name}/log`. */
export { GET } from '../../../api/v1/namespaces/[ns]/pods/[name]/log.ts';
