/** `GET /pods/{ns}`: short for `/api/v1/namespaces/{ns}/pods`. */
export { GET } from '../../api/v1/namespaces/[ns]/pods/index.ts';
