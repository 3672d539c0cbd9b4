/* device.cu: the device query, the current device's exchange, and CUDA's
 * errors as the library reports them (check.cuh). */
#include <atomic>
#include <cstdio>

#include <cuda/version>

#include "check.cuh"
#include "device.cuh"

/* Each device's SM count and compute capability's major once asked, 0
 * before; callers racing on the first ask store the same value. */
static std::atomic<int> sm_counts[CR_MAX_DEVICES];
static std::atomic<int> majors[CR_MAX_DEVICES];

/* What is true when the runtime reports an insufficient driver: either
 * there is no driver at all (cudaDriverGetVersion gives 0; the runtime
 * still says "insufficient") or it is older than this build's runtime. */
static void
describe_driver(cudaError_t code, const char *call, cr_error *error)
{
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        snprintf(error->message, sizeof(error->message),
                 "%s: no NVIDIA driver found (libcuda.so could not be "
                 "loaded): install an NVIDIA driver that supports CUDA "
                 "%d.%d (in %s)", cudaGetErrorName(code),
                 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, call);
    }
    else {
        snprintf(error->message, sizeof(error->message),
                 "%s: the NVIDIA driver supports CUDA up to %d.%d, but this "
                 "build of cudareduce needs CUDA %d.%d: update the driver "
                 "(in %s)", cudaGetErrorName(code), driver / 1000,
                 driver % 1000 / 10, CUDART_VERSION / 1000,
                 CUDART_VERSION % 1000 / 10, call);
    }
}

cr_status
cr_record_cuda_error(cudaError_t code, const char *call, cr_error *error)
{
    error->cuda_code = (int)code;
    if (code == cudaErrorInsufficientDriver) {
        describe_driver(code, call, error);
    }
    else {
        snprintf(error->message, sizeof(error->message), "%s: %s (in %s)",
                 cudaGetErrorName(code), cudaGetErrorString(code), call);
    }
    switch (code) {
    case cudaErrorMemoryAllocation:
        return CR_ERR_NO_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return CR_ERR_NO_DEVICE;
    default:
        return CR_ERR_CUDA;
    }
}

/* The current device's `attribute`, kept in `kept` once asked. */
static cr_status
current_attribute(std::atomic<int> *kept, cudaDeviceAttr attribute,
                  int *value, cr_error *error)
{
    cr_status status = CR_OK;
    int device = 0;
    CR_CHECK(cudaGetDevice(&device));
    *value = device < CR_MAX_DEVICES
        ? kept[device].load(std::memory_order_relaxed) : 0;
    if (*value == 0) {
        CR_CHECK(cudaDeviceGetAttribute(value, attribute, device));
        if (device < CR_MAX_DEVICES) {
            kept[device].store(*value, std::memory_order_relaxed);
        }
    }
done:
    return status;
}

cr_status
cr_current_sm_count(int *sm_count, cr_error *error)
{
    return current_attribute(sm_counts, cudaDevAttrMultiProcessorCount,
                             sm_count, error);
}

cr_status
cr_current_dependent_launches(int *allowed, cr_error *error)
{
    int major = 0;
    const cr_status status = current_attribute(
        majors, cudaDevAttrComputeCapabilityMajor, &major, error);
    *allowed = status == CR_OK && major >= 9;
    return status;
}

extern "C" cr_status
cr_device_query(cr_device_info *info, cr_error *error)
{
    cr_status status = CR_OK;
    cudaDeviceProp prop;
    int count = 0;
    CR_CHECK(cudaGetDeviceCount(&count));
    CR_CHECK(cudaGetDevice(&info->ordinal));
    CR_CHECK(cudaGetDeviceProperties(&prop, info->ordinal));
    snprintf(info->name, sizeof(info->name), "%s", prop.name);
    info->compute_capability = 10 * prop.major + prop.minor;
    info->sm_count = prop.multiProcessorCount;
    info->l2_bytes = prop.l2CacheSize;
    info->total_bytes = (int64_t)prop.totalGlobalMem;
    CR_CHECK(cudaDeviceGetAttribute(&info->sm_clock_khz,
                                    cudaDevAttrClockRate, info->ordinal));
    CR_CHECK(cudaDeviceGetAttribute(&info->memory_clock_khz,
                                    cudaDevAttrMemoryClockRate,
                                    info->ordinal));
    CR_CHECK(cudaDeviceGetAttribute(&info->memory_bus_bits,
                                    cudaDevAttrGlobalMemoryBusWidth,
                                    info->ordinal));
    CR_CHECK(cudaDriverGetVersion(&info->driver_version));
    CR_CHECK(cudaRuntimeGetVersion(&info->runtime_version));
    info->cccl_version = CCCL_VERSION;
done:
    return status;
}

extern "C" cr_status
cr_device_count(int *count, cr_error *error)
{
    cr_status status = CR_OK;
    CR_CHECK(cudaGetDeviceCount(count));
done:
    return status;
}

extern "C" cr_status
cr_device_exchange(int device, int *previous, cr_error *error)
{
    cr_status status = CR_OK;
    int count = 0;
    CR_CHECK(cudaGetDevice(previous));
    if (device == *previous) {
        goto done;
    }
    CR_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count) {
        error->cuda_code = 0;
        snprintf(error->message, sizeof(error->message), "CUDA device %d "
                 "does not exist: this machine has %d", device, count);
        status = CR_ERR_INVALID;
        goto done;
    }
    CR_CHECK(cudaSetDevice(device));
done:
    return status;
}
