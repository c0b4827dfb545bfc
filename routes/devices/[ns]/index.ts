/** `/devices/{ns}`: short for `/apis/devices.kubeedge.io/v1beta1/namespaces/{ns}/devices`. */
export { GET, POST } from '../../apis/devices.kubeedge.io/v1beta1/namespaces/[ns]/devices/index.ts';
