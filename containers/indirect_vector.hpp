#pragma once
// A vector whose elements each live in their own allocation, the vector holding only their owners.
//
// The plan's entries (core::job_plan, 216 bytes with four strings and a share list) and rm.state's jobs
// (messages::job_schedule, seven strings and a share list) are kept sorted by job id and edited in place as
// jobs come and go (vector_edits.hpp). A job whose id sorts first moved every entry after it: 100,000
// elementwise moves, some 4 ms of an arrival's round and 6 ms of its publication at 50,000 nodes. Here an
// insertion moves pointers (800 KB for 100,000 entries), and an element, once made, stays where it is until
// it goes.
//
// Reads and writes as a std::vector<T> of its elements: indexing, random-access iterators that yield T&,
// push_back, equality by elements. Copies are deep. `owners()` is the vector of owners itself, for edits
// that move elements without moving what they hold (apply_vector_edits below). A null owner is never left
// behind by the members here; code editing owners() must leave none either.
//
// Boost's ptr_vector is the same idea; it takes raw pointers to push and hides the vector of owners, which
// the in-place edits need, so this small class is ours.

#include <algorithm>
#include <compare>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "containers/vector_edits.hpp"

namespace rmbus::containers {

template <class T>
class indirect_vector {
  using owners_type = std::vector<std::unique_ptr<T>>;

  template <bool Const>
  class basic_iterator {
    using base =
        std::conditional_t<Const, typename owners_type::const_iterator, typename owners_type::iterator>;

   public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<Const, const T&, T&>;
    using pointer = std::conditional_t<Const, const T*, T*>;

    basic_iterator() = default;
    explicit basic_iterator(base at) : at_(at) {}
    // An iterator converts to a const_iterator, not the other way.
    template <bool C = Const, class = std::enable_if_t<C>>
    basic_iterator(const basic_iterator<false>& other) : at_(other.at_) {}

    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    reference operator[](difference_type n) const { return *at_[n]; }
    basic_iterator& operator++() {
      ++at_;
      return *this;
    }
    basic_iterator operator++(int) { return basic_iterator(at_++); }
    basic_iterator& operator--() {
      --at_;
      return *this;
    }
    basic_iterator operator--(int) { return basic_iterator(at_--); }
    basic_iterator& operator+=(difference_type n) {
      at_ += n;
      return *this;
    }
    basic_iterator& operator-=(difference_type n) {
      at_ -= n;
      return *this;
    }
    friend basic_iterator operator+(basic_iterator i, difference_type n) { return i += n; }
    friend basic_iterator operator+(difference_type n, basic_iterator i) { return i += n; }
    friend basic_iterator operator-(basic_iterator i, difference_type n) { return i -= n; }
    friend difference_type operator-(const basic_iterator& a, const basic_iterator& b) {
      return a.at_ - b.at_;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) { return a.at_ == b.at_; }
    friend auto operator<=>(const basic_iterator& a, const basic_iterator& b) { return a.at_ <=> b.at_; }

   private:
    friend class basic_iterator<true>;
    base at_{};
  };

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  indirect_vector() = default;
  indirect_vector(std::initializer_list<T> items) : indirect_vector(items.begin(), items.end()) {}
  template <class InputIt>
  indirect_vector(InputIt first, InputIt last) {
    assign(first, last);
  }
  // Takes the elements of `items`, each moved into an allocation of its own. Implicit, so that a listing made
  // as a std::vector (tests, tools) is given where this one is asked for; code on a round's path builds an
  // indirect_vector instead.
  indirect_vector(std::vector<T> items) {
    owners_.reserve(items.size());
    for (auto& item : items) push_back(std::move(item));
  }
  indirect_vector(const indirect_vector& other) : indirect_vector(other.begin(), other.end()) {}
  indirect_vector(indirect_vector&&) noexcept = default;
  indirect_vector& operator=(const indirect_vector& other) {
    if (this != &other) *this = indirect_vector(other);
    return *this;
  }
  indirect_vector& operator=(indirect_vector&&) noexcept = default;

  size_type size() const { return owners_.size(); }
  bool empty() const { return owners_.empty(); }
  size_type capacity() const { return owners_.capacity(); }
  void reserve(size_type n) { owners_.reserve(n); }
  void clear() { owners_.clear(); }

  T& operator[](size_type k) { return *owners_[k]; }
  const T& operator[](size_type k) const { return *owners_[k]; }
  T& at(size_type k) { return *owners_.at(k); }
  const T& at(size_type k) const { return *owners_.at(k); }
  T& front() { return *owners_.front(); }
  const T& front() const { return *owners_.front(); }
  T& back() { return *owners_.back(); }
  const T& back() const { return *owners_.back(); }

  iterator begin() { return iterator(owners_.begin()); }
  iterator end() { return iterator(owners_.end()); }
  const_iterator begin() const { return const_iterator(owners_.begin()); }
  const_iterator end() const { return const_iterator(owners_.end()); }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

  void push_back(const T& v) { owners_.push_back(std::make_unique<T>(v)); }
  void push_back(T&& v) { owners_.push_back(std::make_unique<T>(std::move(v))); }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    return *owners_.emplace_back(std::make_unique<T>(std::forward<Args>(args)...));
  }
  void pop_back() { owners_.pop_back(); }
  template <class InputIt>
  void assign(InputIt first, InputIt last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }
  iterator erase(const_iterator at) { return erase(at, at + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto from = owners_.begin() + (first - cbegin());
    return iterator(owners_.erase(from, from + (last - first)));
  }

  owners_type& owners() { return owners_; }
  const owners_type& owners() const { return owners_; }

  friend bool operator==(const indirect_vector& a, const indirect_vector& b) {
    if (a.size() != b.size()) return false;
    for (size_type k = 0; k < a.size(); ++k)
      if (!(a[k] == b[k])) return false;
    return true;
  }

  friend bool operator==(const indirect_vector& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  owners_type owners_;
};

// apply_vector_edits for an indirect_vector: the owners move, the elements stay; each insertion makes a
// default-constructed element, and `visit(k, element)` is called as for a vector.
template <class T, class Visit>
void apply_vector_edits(indirect_vector<T>& v, const std::vector<vector_edit>& edits, Visit visit) {
  apply_vector_edits(v.owners(), edits, [&](std::size_t k, std::unique_ptr<T>& owner) {
    if (owner == nullptr) owner = std::make_unique<T>();
    visit(k, *owner);
  });
}

}  // namespace rmbus::containers
