/* kept_list.cuh: resources kept between calls, per device, behind a mutex.
 *
 * A call checks one out for itself (so calls on several threads never
 * share one) and back in when done; one whose last use failed is destroyed
 * instead, and module teardown destroys them all.  T has `T *next` and
 * `int device`; Fill(T *, cr_error *) makes the resources of a zeroed T
 * whose device is set (the current one), and Destroy(T *) frees whatever
 * of them it finds and the T itself, so a half-filled T is destroyed the
 * same way as a whole one. */
#ifndef CUDAREDUCE_KEPT_LIST_CUH
#define CUDAREDUCE_KEPT_LIST_CUH

#include <cstdlib>
#include <mutex>

#include "check.cuh"

template <class T, cr_status (*Fill)(T *, cr_error *), void (*Destroy)(T *)>
class kept_list {
public:
    /* A kept T of the current device, else a new one. */
    cr_status acquire(T **out, cr_error *error)
    {
        return acquire_fitting(out, [](const T *) { return true; }, 0,
                               error);
    }

    /* A kept T of the current device for which fits(const T *) holds;
     * else, where fewer than `most` of the device's are kept, a new one;
     * else the one of them checked in longest ago. */
    template <class Fits>
    cr_status acquire_fitting(T **out, Fits fits, int most, cr_error *error)
    {
        cr_status status = CR_OK;
        int device = 0;
        T *item = NULL;
        CR_CHECK(cudaGetDevice(&device));
        if ((*out = take(device, fits, most)) != NULL) {
            return CR_OK;
        }
        item = static_cast<T *>(calloc(1, sizeof(T)));
        if (item == NULL) {
            return cr_fail(error, CR_ERR_NO_MEMORY,
                           "out of host memory for a kept resource");
        }
        item->device = device;
        status = Fill(item, error);
        if (status != CR_OK) {
            Destroy(item);
            goto done;
        }
        *out = item;
    done:
        return status;
    }

    /* Checks `item` back in; `healthy`: its last use did not fail. */
    void release(T *item, int healthy)
    {
        if (!healthy) {
            Destroy(item);
            return;
        }
        std::lock_guard<std::mutex> guard(lock_);
        item->next = head_;
        head_ = item;
    }

    /* Destroys every kept T (module teardown), each with its own device
     * current, and leaves the caller's current. */
    void clear()
    {
        std::lock_guard<std::mutex> guard(lock_);
        int current = 0;
        const bool restore = cudaGetDevice(&current) == cudaSuccess;
        while (head_ != NULL) {
            T *item = head_;
            head_ = item->next;
            (void)cudaSetDevice(item->device);
            Destroy(item);
        }
        if (restore) {
            (void)cudaSetDevice(current);
        }
    }

private:
    /* acquire_fitting's kept T, unlinked, or NULL for a new one.  The
     * list is in the order of check-in, the latest first. */
    template <class Fits>
    T *take(int device, Fits fits, int most)
    {
        std::lock_guard<std::mutex> guard(lock_);
        T **oldest = NULL;
        int kept = 0;
        for (T **link = &head_; *link != NULL; link = &(*link)->next) {
            if ((*link)->device == device) {
                if (fits(*link)) {
                    return unlink(link);
                }
                oldest = link;
                kept++;
            }
        }
        return oldest != NULL && kept >= most ? unlink(oldest) : NULL;
    }

    static T *unlink(T **link)
    {
        T *item = *link;
        *link = item->next;
        return item;
    }

    std::mutex lock_;
    T *head_ = NULL;
};

/* Declares, for the kept T named PREFIX, PREFIX_fill and PREFIX_destroy
 * (defined by its own file, with the list) and the list LIST of them. */
#define CR_DECLARE_KEPT_LIST(T, PREFIX, LIST)                              \
    cr_status PREFIX##_fill(T *item, cr_error *error);                     \
    void PREFIX##_destroy(T *item);                                        \
    extern kept_list<T, PREFIX##_fill, PREFIX##_destroy> LIST;

#endif /* CUDAREDUCE_KEPT_LIST_CUH */
