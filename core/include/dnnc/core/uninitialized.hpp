#pragma once
// uninitialized_vector<T>: a std::vector whose resize(n) leaves new elements of a trivial T
// uninitialised instead of zeroing them. For arrays of gigabytes that are sized first and
// then written in full: zeroing would cost a pass over all of it, and first-touching the
// pages on the threads that write them spreads the page faults over those threads.
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace dnnc {

template <class T, class A = std::allocator<T>>
class default_init_allocator : public A {
    using traits = std::allocator_traits<A>;

public:
    template <class U>
    struct rebind {
        using other = default_init_allocator<U, typename traits::template rebind_alloc<U>>;
    };
    using A::A;
    // Value-initialisation (resize's) becomes default-initialisation.
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        traits::construct(static_cast<A&>(*this), p, std::forward<Args>(args)...);
    }
};

template <class T>
using uninitialized_vector = std::vector<T, default_init_allocator<T>>;

}  // namespace dnnc
