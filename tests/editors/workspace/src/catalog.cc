// Sample service for the real-editor tests: an order service that prices every item of every
// basket through the catalog, whose price lookup goes to storage in production.
#include <vector>

namespace shop {

struct Item {
  int id = 0;
  int quantity = 0;
};

struct Basket {
  std::vector<Item> items;
};

struct Order {
  std::vector<Basket> baskets;
};

class Catalog {
 public:
  double price(int id) const;
  void audit(int id) const;
};

double Catalog::price(int id) const { return 1.5 * id; }

void Catalog::audit(int id) const { (void)id; }

class OrderService {
 public:
  double total(const Order &order) const;

 private:
  Catalog catalog_;
};

double OrderService::total(const Order &order) const {
  double sum = 0;
  for (const Basket &basket : order.baskets) {
    for (const Item &item : basket.items) {
      sum += catalog_.price(item.id) * item.quantity;
    }
  }
  return sum;
}

}  // namespace shop
