/* kept_list.cuh: resources kept between calls, per device, behind a mutex.
 *
 * A call checks one out for itself (so calls on several threads never
 * share one) and back in when done; module teardown frees them all.  T
 * has `T *next` and `int device`. */
#ifndef CUDAREDUCE_KEPT_LIST_CUH
#define CUDAREDUCE_KEPT_LIST_CUH

#include <mutex>

template <class T>
class kept_list {
public:
    /* A kept T of `device`, taken off the list; NULL if none. */
    T *take(int device)
    {
        std::lock_guard<std::mutex> guard(lock_);
        for (T **link = &head_; *link != NULL; link = &(*link)->next) {
            if ((*link)->device == device) {
                T *item = *link;
                *link = item->next;
                return item;
            }
        }
        return NULL;
    }

    void put(T *item)
    {
        std::lock_guard<std::mutex> guard(lock_);
        item->next = head_;
        head_ = item;
    }

    /* Frees every kept T with destroy(T *). */
    template <class Destroy>
    void clear(Destroy destroy)
    {
        std::lock_guard<std::mutex> guard(lock_);
        while (head_ != NULL) {
            T *item = head_;
            head_ = item->next;
            destroy(item);
        }
    }

private:
    std::mutex lock_;
    T *head_ = NULL;
};

#endif /* CUDAREDUCE_KEPT_LIST_CUH */
