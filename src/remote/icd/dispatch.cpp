// The dispatch table the ICD loader calls through, and the driver's exported entry points.
// Every slot is filled: what this driver does not implement returns CL_INVALID_OPERATION.
#include <cstring>
#include <tuple>
#include <type_traits>

#include "remote/icd/api_support.hpp"

namespace troupe::remote::icd {

cl_icd_dispatch dispatch_table{};

namespace {

template <class Function>
struct refuse;
template <class Result, class... Arguments>
struct refuse<Result(CL_API_CALL*)(Arguments...)> {
  static Result CL_API_CALL call(Arguments... arguments) {
    if constexpr (std::is_same_v<Result, cl_int>) {
      ((void)arguments, ...);
      return CL_INVALID_OPERATION;
    } else if constexpr (std::is_void_v<Result>) {
      ((void)arguments, ...);
    } else {
      // Calls that return an object report through their last argument, cl_int* errcode_ret.
      std::tuple<Arguments...> all{arguments...};
      constexpr std::size_t count = sizeof...(Arguments);
      if constexpr (count > 0) {
        using last = std::tuple_element_t<count - 1, std::tuple<Arguments...>>;
        if constexpr (std::is_same_v<last, cl_int*>) {
          if (cl_int* errcode_ret = std::get<count - 1>(all)) *errcode_ret = CL_INVALID_OPERATION;
        }
      }
      return Result{};
    }
  }
};

template <class Slot>
void unsupported(Slot& slot) {
  if constexpr (std::is_pointer_v<Slot> && std::is_function_v<std::remove_pointer_t<Slot>>) {
    slot = &refuse<Slot>::call;
  }
}

}  // namespace

void fill_dispatch_table(cl_icd_dispatch& table) {
  table.clGetPlatformIDs = clGetPlatformIDs;
  table.clGetPlatformInfo = clGetPlatformInfo;
  table.clGetDeviceIDs = clGetDeviceIDs;
  table.clGetDeviceInfo = clGetDeviceInfo;
  table.clCreateContext = clCreateContext;
  table.clCreateContextFromType = clCreateContextFromType;
  table.clRetainContext = clRetainContext;
  table.clReleaseContext = clReleaseContext;
  table.clGetContextInfo = clGetContextInfo;
  table.clCreateCommandQueue = clCreateCommandQueue;
  table.clRetainCommandQueue = clRetainCommandQueue;
  table.clReleaseCommandQueue = clReleaseCommandQueue;
  table.clGetCommandQueueInfo = clGetCommandQueueInfo;
  table.clSetCommandQueueProperty = clSetCommandQueueProperty;
  table.clCreateBuffer = clCreateBuffer;
  table.clCreateImage2D = clCreateImage2D;
  table.clCreateImage3D = clCreateImage3D;
  table.clRetainMemObject = clRetainMemObject;
  table.clReleaseMemObject = clReleaseMemObject;
  table.clGetSupportedImageFormats = clGetSupportedImageFormats;
  table.clGetMemObjectInfo = clGetMemObjectInfo;
  table.clGetImageInfo = clGetImageInfo;
  table.clCreateSampler = clCreateSampler;
  table.clRetainSampler = clRetainSampler;
  table.clReleaseSampler = clReleaseSampler;
  table.clGetSamplerInfo = clGetSamplerInfo;
  table.clCreateProgramWithSource = clCreateProgramWithSource;
  table.clCreateProgramWithBinary = clCreateProgramWithBinary;
  table.clRetainProgram = clRetainProgram;
  table.clReleaseProgram = clReleaseProgram;
  table.clBuildProgram = clBuildProgram;
  table.clUnloadCompiler = clUnloadCompiler;
  table.clGetProgramInfo = clGetProgramInfo;
  table.clGetProgramBuildInfo = clGetProgramBuildInfo;
  table.clCreateKernel = clCreateKernel;
  table.clCreateKernelsInProgram = clCreateKernelsInProgram;
  table.clRetainKernel = clRetainKernel;
  table.clReleaseKernel = clReleaseKernel;
  table.clSetKernelArg = clSetKernelArg;
  table.clGetKernelInfo = clGetKernelInfo;
  table.clGetKernelWorkGroupInfo = clGetKernelWorkGroupInfo;
  table.clWaitForEvents = clWaitForEvents;
  table.clGetEventInfo = clGetEventInfo;
  table.clRetainEvent = clRetainEvent;
  table.clReleaseEvent = clReleaseEvent;
  table.clGetEventProfilingInfo = clGetEventProfilingInfo;
  table.clFlush = clFlush;
  table.clFinish = clFinish;
  table.clEnqueueReadBuffer = clEnqueueReadBuffer;
  table.clEnqueueWriteBuffer = clEnqueueWriteBuffer;
  table.clEnqueueCopyBuffer = clEnqueueCopyBuffer;
  table.clEnqueueReadImage = clEnqueueReadImage;
  table.clEnqueueWriteImage = clEnqueueWriteImage;
  table.clEnqueueCopyImage = clEnqueueCopyImage;
  table.clEnqueueCopyImageToBuffer = clEnqueueCopyImageToBuffer;
  table.clEnqueueCopyBufferToImage = clEnqueueCopyBufferToImage;
  table.clEnqueueMapBuffer = clEnqueueMapBuffer;
  table.clEnqueueMapImage = clEnqueueMapImage;
  table.clEnqueueUnmapMemObject = clEnqueueUnmapMemObject;
  table.clEnqueueNDRangeKernel = clEnqueueNDRangeKernel;
  table.clEnqueueTask = clEnqueueTask;
  table.clEnqueueNativeKernel = clEnqueueNativeKernel;
  table.clEnqueueMarker = clEnqueueMarker;
  table.clEnqueueWaitForEvents = clEnqueueWaitForEvents;
  table.clEnqueueBarrier = clEnqueueBarrier;
  table.clGetExtensionFunctionAddress = clGetExtensionFunctionAddress;
  unsupported(table.clCreateFromGLBuffer);
  unsupported(table.clCreateFromGLTexture2D);
  unsupported(table.clCreateFromGLTexture3D);
  unsupported(table.clCreateFromGLRenderbuffer);
  unsupported(table.clGetGLObjectInfo);
  unsupported(table.clGetGLTextureInfo);
  unsupported(table.clEnqueueAcquireGLObjects);
  unsupported(table.clEnqueueReleaseGLObjects);
  unsupported(table.clGetGLContextInfoKHR);
  unsupported(table.clGetDeviceIDsFromD3D10KHR);
  unsupported(table.clCreateFromD3D10BufferKHR);
  unsupported(table.clCreateFromD3D10Texture2DKHR);
  unsupported(table.clCreateFromD3D10Texture3DKHR);
  unsupported(table.clEnqueueAcquireD3D10ObjectsKHR);
  unsupported(table.clEnqueueReleaseD3D10ObjectsKHR);
  table.clSetEventCallback = clSetEventCallback;
  table.clCreateSubBuffer = clCreateSubBuffer;
  table.clSetMemObjectDestructorCallback = clSetMemObjectDestructorCallback;
  table.clCreateUserEvent = clCreateUserEvent;
  table.clSetUserEventStatus = clSetUserEventStatus;
  table.clEnqueueReadBufferRect = clEnqueueReadBufferRect;
  table.clEnqueueWriteBufferRect = clEnqueueWriteBufferRect;
  table.clEnqueueCopyBufferRect = clEnqueueCopyBufferRect;
  unsupported(table.clCreateSubDevicesEXT);
  unsupported(table.clRetainDeviceEXT);
  unsupported(table.clReleaseDeviceEXT);
  unsupported(table.clCreateEventFromGLsyncKHR);
  table.clCreateSubDevices = clCreateSubDevices;
  table.clRetainDevice = clRetainDevice;
  table.clReleaseDevice = clReleaseDevice;
  table.clCreateImage = clCreateImage;
  table.clCreateProgramWithBuiltInKernels = clCreateProgramWithBuiltInKernels;
  table.clCompileProgram = clCompileProgram;
  table.clLinkProgram = clLinkProgram;
  table.clUnloadPlatformCompiler = clUnloadPlatformCompiler;
  table.clGetKernelArgInfo = clGetKernelArgInfo;
  table.clEnqueueFillBuffer = clEnqueueFillBuffer;
  table.clEnqueueFillImage = clEnqueueFillImage;
  table.clEnqueueMigrateMemObjects = clEnqueueMigrateMemObjects;
  table.clEnqueueMarkerWithWaitList = clEnqueueMarkerWithWaitList;
  table.clEnqueueBarrierWithWaitList = clEnqueueBarrierWithWaitList;
  table.clGetExtensionFunctionAddressForPlatform = clGetExtensionFunctionAddressForPlatform;
  unsupported(table.clCreateFromGLTexture);
  unsupported(table.clGetDeviceIDsFromD3D11KHR);
  unsupported(table.clCreateFromD3D11BufferKHR);
  unsupported(table.clCreateFromD3D11Texture2DKHR);
  unsupported(table.clCreateFromD3D11Texture3DKHR);
  unsupported(table.clCreateFromDX9MediaSurfaceKHR);
  unsupported(table.clEnqueueAcquireD3D11ObjectsKHR);
  unsupported(table.clEnqueueReleaseD3D11ObjectsKHR);
  unsupported(table.clGetDeviceIDsFromDX9MediaAdapterKHR);
  unsupported(table.clEnqueueAcquireDX9MediaSurfacesKHR);
  unsupported(table.clEnqueueReleaseDX9MediaSurfacesKHR);
  unsupported(table.clCreateFromEGLImageKHR);
  unsupported(table.clEnqueueAcquireEGLObjectsKHR);
  unsupported(table.clEnqueueReleaseEGLObjectsKHR);
  unsupported(table.clCreateEventFromEGLSyncKHR);
  table.clCreateCommandQueueWithProperties = clCreateCommandQueueWithProperties;
  unsupported(table.clCreatePipe);
  unsupported(table.clGetPipeInfo);
  unsupported(table.clSVMAlloc);
  unsupported(table.clSVMFree);
  unsupported(table.clEnqueueSVMFree);
  unsupported(table.clEnqueueSVMMemcpy);
  unsupported(table.clEnqueueSVMMemFill);
  unsupported(table.clEnqueueSVMMap);
  unsupported(table.clEnqueueSVMUnmap);
  unsupported(table.clCreateSamplerWithProperties);
  unsupported(table.clSetKernelArgSVMPointer);
  unsupported(table.clSetKernelExecInfo);
  unsupported(table.clGetKernelSubGroupInfoKHR);
  unsupported(table.clCloneKernel);
  unsupported(table.clCreateProgramWithIL);
  unsupported(table.clEnqueueSVMMigrateMem);
  unsupported(table.clGetDeviceAndHostTimer);
  unsupported(table.clGetHostTimer);
  unsupported(table.clGetKernelSubGroupInfo);
  unsupported(table.clSetDefaultDeviceCommandQueue);
  unsupported(table.clSetProgramReleaseCallback);
  unsupported(table.clSetProgramSpecializationConstant);
  unsupported(table.clCreateBufferWithProperties);
  unsupported(table.clCreateImageWithProperties);
  unsupported(table.clSetContextDestructorCallback);
}

namespace {
const bool table_filled = (fill_dispatch_table(dispatch_table), true);
}  // namespace

}  // namespace troupe::remote::icd

extern "C" {

__attribute__((visibility("default"))) CL_API_ENTRY void* CL_API_CALL
clGetExtensionFunctionAddress(const char* function_name) {
  if (function_name == nullptr) return nullptr;
  // The ICD loader asks for these two before it uses the dispatch table.
  if (std::strcmp(function_name, "clIcdGetPlatformIDsKHR") == 0) {
    return reinterpret_cast<void*>(&clIcdGetPlatformIDsKHR);
  }
  if (std::strcmp(function_name, "clGetPlatformInfo") == 0) {
    return reinterpret_cast<void*>(&clGetPlatformInfo);
  }
  return nullptr;
}

CL_API_ENTRY void* CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id,
                                                                        const char* function_name) {
  return clGetExtensionFunctionAddress(function_name);
}

}  // extern "C"
