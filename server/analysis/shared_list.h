// A list whose elements are immutable once shared: each element is held by a
// std::shared_ptr<const T>, so two lists (a snapshot and the next one, or the inference's
// memory of its last results) can hold one element without copying it. Reading is a vector's:
// index, iterate, size. Writing through a non-const list (operator[], front(), back(), mut())
// first gives the list its own copy of an element another holder shares (copy on write), so a
// reader of another list never sees it change.
//
// Thread safety: an element is never written while shared. A list itself is not synchronized;
// a list reached through a shared_ptr<const ...> is only read.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace perfhat::analysis {

template <typename T>
class SharedList {
  using Slots = std::vector<std::shared_ptr<const T>>;

 public:
  using value_type = T;
  using size_type = std::size_t;
  using Ptr = std::shared_ptr<const T>;

  // Iterates the elements as const T&.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    explicit const_iterator(typename Slots::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    reference operator[](difference_type n) const { return *it_[n]; }
    const_iterator& operator++() { return ++it_, *this; }
    const_iterator operator++(int) { return const_iterator(it_++); }
    const_iterator& operator--() { return --it_, *this; }
    const_iterator operator--(int) { return const_iterator(it_--); }
    const_iterator& operator+=(difference_type n) { return it_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return it_ -= n, *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.it_ - b.it_;
    }
    bool operator==(const const_iterator& o) const { return it_ == o.it_; }
    auto operator<=>(const const_iterator& o) const { return it_ <=> o.it_; }

   private:
    typename Slots::const_iterator it_;
  };
  using iterator = const_iterator;

  SharedList() = default;
  SharedList(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }

  size_t size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  void reserve(size_t n) { slots_.reserve(n); }
  void clear() { slots_.clear(); }
  const_iterator begin() const { return const_iterator(slots_.begin()); }
  const_iterator end() const { return const_iterator(slots_.end()); }

  const T& operator[](size_t i) const { return *slots_[i]; }
  const T& front() const { return *slots_.front(); }
  const T& back() const { return *slots_.back(); }
  T& operator[](size_t i) { return mut(i); }
  T& front() { return mut(0); }
  T& back() { return mut(slots_.size() - 1); }

  // The element as held, to share with another list.
  const Ptr& shared(size_t i) const { return slots_[i]; }

  // Element `i` for writing: the list's own, copied first when anyone else holds it.
  T& mut(size_t i) {
    Ptr& p = slots_[i];
    // Only this list holds it (no weak pointers are ever made), so nobody can start sharing it
    // while it is written. Every element was made as a T (never a const T), so writing it
    // through const_cast is defined.
    if (p.use_count() != 1) p = std::make_shared<T>(*p);
    return const_cast<T&>(*p);
  }

  void push_back(const T& v) { slots_.push_back(std::make_shared<T>(v)); }
  void push_back(T&& v) { slots_.push_back(std::make_shared<T>(std::move(v))); }
  // Holds `p` as is (shared with whoever else holds it); `p` must point to an object made as
  // a T, not as a const T (mut() writes it once nobody else holds it).
  void push_back(Ptr p) { slots_.push_back(std::move(p)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    auto p = std::make_shared<T>(std::forward<Args>(args)...);
    T& v = *p;
    slots_.push_back(std::move(p));
    return v;
  }

 private:
  Slots slots_;
};

}  // namespace perfhat::analysis
