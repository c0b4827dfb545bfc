/** `/devices/{ns}/{name}`: short for `/apis/devices.kubeedge.io/v1beta1/namespaces/{ns}/devices/{name}`. */
export {
  DELETE,
  GET,
  PATCH,
  PUT,
} from '../../../apis/devices.kubeedge.io/v1beta1/namespaces/[ns]/devices/[name]/index.ts';
