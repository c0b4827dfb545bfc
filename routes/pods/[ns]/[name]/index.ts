/** `GET /pods/{ns}/{name}`: short for `/api/v1/namespaces/{ns}/pods/{name}`. */
export { GET } from '../../../api/v1/namespaces/[ns]/pods/[name]/index.ts';
