/** `POST /pods/{ns}/{name}/restart`: short for `/api/v1/namespaces/{ns}/pods/{name}/restart`. */
export { POST } from '../../../api/v1/namespaces/[ns]/pods/[name]/restart.ts';
