/** `GET /devices`: every device on the node, short for `/apis/devices.kubeedge.io/v1beta1/devices`. */
export { GET } from '../apis/devices.kubeedge.io/v1beta1/devices.ts';
